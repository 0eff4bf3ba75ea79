"""graphc, a small tensor-graph compiler, from Python.

    import graphc
    exe = graphc.compile("model.onnx", device="cpu")
    y = exe(x)                                   # NumPy or torch, no copies

    model = torch.compile(model, backend="graphc")   # the torch.compile backend

The package is a thin layer over the C++ library (libgraphc.so): the
compiler, its passes and backends are the ones the ``graphc`` command runs.
See docs/python.md.
"""

from graphc import _graphc
from graphc.api import CancelToken, Executable, Graph, compile, load, parse
from graphc.errors import Cancelled, CheckError, CompileError, Diagnostic, Error

__version__ = _graphc.version()

__all__ = [
    "CancelToken",
    "Cancelled",
    "CheckError",
    "CompileError",
    "Diagnostic",
    "Error",
    "Executable",
    "Graph",
    "compile",
    "load",
    "parse",
]
