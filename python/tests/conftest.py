"""pytest setup for the graphc package's tests: the package comes from the
build tree (PYTHONPATH=build/python, set by the ctest that runs these) or
from an installed wheel; the real-model suite's modules from
tests/models/make_models.py."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))


@pytest.fixture
def examples():
    return os.path.join(ROOT, "examples")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test starts with no compiled frames, no compile records and no
    cached executables."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "_dynamo"):
        torch._dynamo.reset()
    if "graphc.dynamo" in sys.modules:
        sys.modules["graphc.dynamo"].reset()
    yield
