"""graphc.compile and graphc.load: a graph (a ``.graph`` file or text, an
ONNX model, a :class:`Graph`) compiled for a device into an
:class:`Executable` that runs on NumPy arrays and torch tensors without
copying them.

    >>> import numpy as np, graphc
    >>> exe = graphc.compile("examples/mlp.graph", device="cpu")
    >>> y = exe(x, w1, b1, w2, b2)          # arrays in, an array out
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, List, Mapping, Optional, Union

from graphc._graphc import CancelToken, Executable, Graph
from graphc._graphc import compile as _compile

Source = Union[Graph, str, "os.PathLike[str]", Any]


def parse(text: str, name: str = "<string>") -> Graph:
    """A graph from ``.graph`` text; ``name`` is the file name its errors cite."""
    return Graph.parse(text, name)


def _initializers(model: Any) -> List[Any]:
    """Every initializer of an onnx.ModelProto, its subgraphs' (If, Loop) too."""
    found: List[Any] = []
    graphs = [model.graph]
    while graphs:
        g = graphs.pop()
        found.extend(g.initializer)
        for node in g.node:
            for a in node.attribute:
                if a.HasField("g"):
                    graphs.append(a.g)
                graphs.extend(a.graphs)
    return found


def load(source: Source) -> Graph:
    """A graph from a ``.graph`` file, an ONNX file (``.onnx``), ``.graph``
    text, or an ``onnx.ModelProto``."""
    if isinstance(source, Graph):
        return source
    if isinstance(source, str) and _looks_like_text(source):
        return Graph.parse(source)
    if isinstance(source, (str, os.PathLike)):
        return Graph.load(os.fspath(source))
    if hasattr(source, "SerializeToString"):  # an onnx.ModelProto
        external = [t.name for t in _initializers(source) if getattr(t, "data_location", 0) == 1]  # EXTERNAL
        if external:
            raise ValueError(f"this ModelProto's initializers are external data ({len(external)}, "
                             f"'{external[0]}' first), which it does not hold: pass the model's path instead, "
                             "or onnx.load it with load_external_data=True")
        with tempfile.TemporaryDirectory(prefix="graphc-onnx-") as folder:
            path = os.path.join(folder, "model.onnx")
            with open(path, "wb") as f:
                f.write(source.SerializeToString())
            return Graph.load(path)
    raise TypeError(f"graphc cannot load a {type(source).__name__}: pass a path, .graph text, a Graph or an onnx.ModelProto")


def compile(
    source: Source,
    device: str = "cpu",
    *,
    dynamic: Optional[Mapping[str, Mapping[int, str]]] = None,
    constants: Optional[Mapping[str, Any]] = None,
    updates: Optional[Mapping[int, str]] = None,
    passes: str = "",
    dump_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    print_weights: bool = False,
    arch: str = "",
    matmul: str = "generated",
    cancel: Optional[CancelToken] = None,
) -> Executable:
    """Compiles ``source`` for ``device`` ("cpu", "cuda" or "reference").

    dynamic:   ``{"x": {0: "B"}}`` makes dim 0 of input ``x`` the symbolic
               size ``B`` (a model exported with a static batch runs at any
               batch; the sizes are bound by each call's arrays).
    constants: ``{"w": array}`` binds inputs to constant values (copied
               once), so the backend packs them at compile time: a model's
               weights. The executable then takes the remaining inputs.
    updates:   ``{0: "w"}`` makes result 0 update input ``w`` in place (as
               ``-> (f32[4] updates %w)`` in the text): each run writes it
               into the array passed for ``w``, which must be writable, and
               returns that array as the result.
    passes:    a comma-separated pass pipeline (``graphc opt --passes``).
    dump_dir:  write the debug dump there (default: ``$GRAPHC_DEBUG_DIR``).
    arch, matmul: cuda's architecture (``sm_90``) and GEMM implementation.
    cancel:    a CancelToken another thread may cancel() to stop the
               compile (between passes and kernels): it raises
               Cancelled. Ctrl-C on the main thread stops it too
               (KeyboardInterrupt).

    Raises CompileError, with each diagnostic's file, line and column, for
    a graph graphc cannot compile.
    """
    graph = load(source)
    if dynamic:
        graph = graph.with_dynamic_dims({name: dict(dims) for name, dims in dynamic.items()})
    if constants:
        graph = graph.with_constants(dict(constants))
    if updates:
        graph = graph.with_input_updates({int(k): name for k, name in updates.items()})
    return _compile(
        graph,
        device=device,
        passes=passes,
        dump_dir=os.fspath(dump_dir) if dump_dir is not None else "",
        print_weights=print_weights,
        arch=arch,
        matmul=matmul,
        cancel=cancel,
    )


def _looks_like_text(source: str) -> bool:
    """``.graph`` text rather than a path: several lines, or a graph header."""
    stripped = source.lstrip()
    return "\n" in source or stripped.startswith("graph ") or stripped.startswith("graph@") or stripped.startswith("//")

