"""The exceptions graphc raises.

``CompileError`` carries the compiler's located diagnostics, as the
``graphc`` command prints them (``file:line:col: error: message``), each
also as a :class:`Diagnostic` with its file, line and column.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple


class Diagnostic(NamedTuple):
    """One diagnostic: where (file is None for a graph built without
    source), how bad, what, and the notes pointing at other places."""

    file: Optional[str]
    line: int
    column: int
    severity: str  # "error", "warning", "note"
    message: str
    notes: Tuple["Diagnostic", ...]
    text: str  # formatted: "file:line:col: error: message", the line, a caret

    def __str__(self) -> str:
        return self.text


class Error(Exception):
    """Anything graphc rejects that has no source location: inputs that do
    not fit the graph, an unusable device, a failing library call."""


class CompileError(Error):
    """A graph graphc cannot compile, with located diagnostics."""

    def __init__(self, message: str, diagnostics: Tuple[Diagnostic, ...] = ()):
        super().__init__(message)
        self.diagnostics = tuple(diagnostics)

    def _first(self) -> Optional[Diagnostic]:
        return self.diagnostics[0] if self.diagnostics else None

    @property
    def file(self) -> Optional[str]:
        d = self._first()
        return d.file if d else None

    @property
    def line(self) -> int:
        d = self._first()
        return d.line if d else 0

    @property
    def column(self) -> int:
        d = self._first()
        return d.column if d else 0


class Cancelled(Error):
    """A run stopped through its cancel flag."""


class CheckError(Error):
    """A result of graphc's that differs from eager PyTorch's beyond the
    dtype's tolerance, found by the torch.compile backend's check mode:
    `partition` names the partition, `folder` holds its graph, inputs and
    both results."""

    def __init__(self, message: str, partition: str = "", folder: str = ""):
        super().__init__(message)
        self.partition = partition
        self.folder = folder
