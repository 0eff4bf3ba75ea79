"""graphc as a torch.compile backend: ``torch.compile(model, backend="graphc")``.

The name is registered two ways: the ``torch_dynamo_backends`` entry point
of the installed package (Dynamo finds it without an import) and
``register_backend`` when this module is imported. See backend.py for the
pipeline and options, docs/python.md for the guide.
"""

from importlib.metadata import entry_points

from torch._dynamo.backends.registry import register_backend

from graphc.dynamo.backend import graphc_backend
from graphc.dynamo.logs import CompileRecord, clear_records, compile_records
from graphc.dynamo.partition import clear_cache


def reset() -> None:
    """Forgets every compile: the records and the cache of executables (as
    torch._dynamo.reset() forgets Dynamo's)."""
    clear_records()
    clear_cache()

# Where the entry point is installed, Dynamo registers the name itself when
# it loads it (and refuses a second registration).
if not entry_points(group="torch_dynamo_backends", name="graphc"):
    register_backend(compiler_fn=graphc_backend, name="graphc")

__all__ = ["CompileRecord", "clear_cache", "clear_records", "compile_records", "graphc_backend", "reset"]
