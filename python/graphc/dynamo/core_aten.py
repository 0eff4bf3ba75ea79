"""What graphc does with each op of torch's core ATen IR (the ops tagged
``torch.Tag.core``, the set torch.export and Inductor lower to): translated
(a handler in aten_ops.py or aten_indexing.py), decomposed (graphc's
decomposition tables turn it into other ops before translation: the
backward ops in training graphs' table, training.py), or left
to PyTorch, with the reason. docs/python.md holds the table this module
writes; a test keeps the two equal and every core op accounted for.

    python -m graphc.dynamo.core_aten --markdown docs/python.md
"""

from __future__ import annotations

import argparse
from typing import Dict, List, Tuple

import torch

from graphc.dynamo.aten_ops import HANDLERS
from graphc.dynamo.training import training_decomposition_table

aten = torch.ops.aten

RANDOM = "draws from PyTorch's random number generator, which graphc does not reproduce"
DATA_SHAPE = "its result's shape depends on the data (graphc's sizes are known before a run)"

# Core ops graphc leaves to PyTorch, and why. An op here that also has a
# handler is translated for some of its forms; the reason says which not.
LEFT: Dict[str, str] = {
    "aten._cdist_forward.default": "pairwise distances: no graphc translation yet",
    "aten._pdist_forward.default": "pairwise distances: no graphc translation yet",
    "aten._embedding_bag.default": "bags of variable length given by offsets: segment sums over data-dependent "
                                   "ranges",
    "aten._fft_c2r.default": "complex numbers: graphc has no complex dtype",
    "aten._fft_r2c.default": "complex numbers: graphc has no complex dtype",
    "aten._local_scalar_dense.default": "reads a tensor's value into Python (.item()): the control flow "
                                        "around it is Python's",
    "aten.col2im.default": "fold (col2im): no graphc translation yet",
    "aten.grid_sampler_2d.default": "bilinear sampling at coordinates computed at run time: no graphc op yet",
    "aten.masked_scatter.default": DATA_SHAPE,
    "aten.nonzero.default": DATA_SHAPE,
    "aten.rand.default": RANDOM,
    "aten.randn.default": RANDOM,
    "aten.randperm.default": RANDOM,
    "aten.bitwise_and.Tensor": "on integers (graphc has no bitwise ops); on bools it is logical_and",
    "aten.bitwise_and.Scalar": "on integers (graphc has no bitwise ops); on bools it is logical_and",
    "aten.bitwise_or.Tensor": "on integers (graphc has no bitwise ops); on bools it is logical_or",
    "aten.bitwise_or.Scalar": "on integers (graphc has no bitwise ops); on bools it is logical_or",
    "aten.bitwise_xor.Tensor": "on integers (graphc has no bitwise ops); on bools it is ne",
    "aten.bitwise_xor.Scalar": "on integers (graphc has no bitwise ops); on bools it is ne",
    "aten.bitwise_not.default": "on integers (graphc has no bitwise ops); on bools it is logical_not",
    "aten.as_strided.default": "any view that is not a reshape: graphc's values are dense, not strided storage",
    "aten.atan2.out": "an out= form: functionalisation never leaves one in a graph",
    "aten.resize_.default": "resizes a tensor's storage in place: functionalisation never leaves it in a graph",
    "aten.index_put.default": "with a boolean mask: " + DATA_SHAPE,
    "aten.index.Tensor": "with a boolean mask: " + DATA_SHAPE,
    "aten.scatter_reduce.two": "reduce=\"mean\" (graphc's scatter reductions are add, mul, max and min)",
    "aten.sort.default": "rows longer than 4096 (graphc sorts by counting ranks, quadratic in the row); a sort "
                         "without stable=True whose indices PyTorch reads (graphc orders ties stably, PyTorch its "
                         "own way, and the two orders must not meet)",
    "aten.topk.default": "rows longer than 4096 (graphc sorts by counting ranks, quadratic in the row); the "
                         "indices of a topk of integers (which of equal elements it picks is PyTorch's)",
    "aten.sym_numel.default": "size arithmetic on SymInts: stays in Python, as Dynamo's guards do",
    "aten.sym_size.int": "size arithmetic on SymInts: stays in Python, as Dynamo's guards do",
    "aten.sym_storage_offset.default": "size arithmetic on SymInts: stays in Python, as Dynamo's guards do",
    "aten.sym_stride.int": "size arithmetic on SymInts: stays in Python, as Dynamo's guards do",
}


def core_ops() -> List[torch._ops.OpOverload]:
    """Every aten overload tagged core, from the registry of schemas (dir()
    of torch.ops.aten lists only the packets used so far)."""
    ops = {}
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        packet = getattr(aten, schema.name.split("::", 1)[1], None)
        op = getattr(packet, schema.overload_name or "default", None) if packet is not None else None
        if isinstance(op, torch._ops.OpOverload) and torch.Tag.core in op.tags:
            ops[str(op)] = op
    return [ops[k] for k in sorted(ops)]


def coverage() -> List[Tuple[str, str, str]]:
    """(op, what graphc does, detail) for every core ATen op. What: translated,
    decomposed, partly (translated, some forms left), left, or unknown."""
    table = training_decomposition_table()  # the inference table and the training ops
    rows = []
    for op in core_ops():
        name = str(op)
        if op in HANDLERS:
            rows.append((name, "partly" if name in LEFT else "translated", LEFT.get(name, "")))
        elif op in table:
            rows.append((name, "decomposed", ""))
        elif name in LEFT:
            rows.append((name, "left", LEFT[name]))
        else:
            rows.append((name, "unknown", ""))
    return rows


BEGIN, END = "<!-- core-aten:begin -->", "<!-- core-aten:end -->"


def markdown() -> str:
    rows = coverage()
    counts = {k: sum(1 for _, what, _ in rows if what == k) for k in ("translated", "partly", "decomposed", "left")}
    lines = [f"Generated by `python -m graphc.dynamo.core_aten --markdown docs/python.md` (torch {torch.__version__.split('+')[0]}): "
             f"{len(rows)} core ATen ops — {counts['translated']} translated, {counts['partly']} translated "
             f"in some forms, {counts['decomposed']} decomposed by graphc's tables into others, "
             f"{counts['left']} left to PyTorch.", "",
             "| op | graphc | when it is left to PyTorch, why |", "|---|---|---|"]
    lines += [f"| `{name.replace('aten.', '')}` | {what} | {detail} |" for name, what, detail in rows]
    return "\n".join(lines)


def write(path: str) -> None:
    with open(path) as f:
        page = f.read()
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as f:
        f.write(f"{head}{BEGIN}\n{markdown()}\n{END}{tail}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--markdown", required=True, help="the page whose core-aten section to rewrite")
    write(parser.parse_args().markdown)
