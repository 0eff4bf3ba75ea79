"""What the backend reports: log lines on stderr for the topics
``GRAPHC_LOGS`` names (comma-separated, as torch's ``TORCH_LOGS`` and the
C++ library's), and a record of every compile for programs and tests.

    GRAPHC_LOGS=graph_breaks   each op left to PyTorch and why, and each
                               partition graphc compiled
    GRAPHC_LOGS=backend        each compile: partitions, time, cache hits
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Tuple


def wanted(topic: str) -> bool:
    topics = os.environ.get("GRAPHC_LOGS", "")
    return any(t.strip().lstrip("+") == topic for t in topics.split(","))


def log(topic: str, line: str) -> None:
    if wanted(topic):
        print(f"graphc: {line}", file=sys.stderr, flush=True)


@dataclass
class CompileRecord:
    """One graph Dynamo handed the backend, and what became of it."""

    name: str
    partitions: int = 0  # partitions compiled by graphc
    graphc_ops: int = 0  # ATen ops inside them
    eager_ops: List[Tuple[str, str]] = field(default_factory=list)  # (op, why) left to PyTorch
    failed_partitions: List[str] = field(default_factory=list)  # compile errors, run in PyTorch instead
    cache_hits: int = 0
    graphs: List[str] = field(default_factory=list)  # the .graph text of each partition compiled
    seconds: float = 0.0  # the backend's whole time (Dynamo's tracing before it not included)
    stages: Dict[str, float] = field(default_factory=dict)  # lower to ATen, partition, translate, graphc compile
    training: bool = False  # a forward and backward (AOTAutograd's joint graph, split); the rest counts both


RECORDS: List[CompileRecord] = []


def compile_records() -> List[CompileRecord]:
    """Every compile the backend made in this process, oldest first."""
    return list(RECORDS)


def clear_records() -> None:
    RECORDS.clear()
