"""The translation table, continued: linear algebra beyond matmul.

``linalg_solve_triangular`` becomes graphc's ``solve_triangular`` (``A X =
B`` per matrix of a batch), the form gated delta-rule attention (Qwen3-Next,
Qwen3.5, OLMo-Hybrid) solves its chunk's unit lower-triangular system
with. Batch dims broadcast as torch broadcasts them (both operands are
expanded to the result's); the right-hand form (``X A = B``, left=False)
is the left one transposed.
"""

from __future__ import annotations

from typing import List

import torch
import torch.fx

from graphc.dynamo.aten_ops import arg, handles, out
from graphc.dynamo.translate import Builder, Dim, Unsupported, dim_text, val

aten = torch.ops.aten


def expanded(b: Builder, x: torch.fx.Node, batch: List[Dim]) -> str:
    """x with its batch dims expanded to `batch` (its last two kept)."""
    v = b.value(x)
    shape = list(val(x).shape)
    if [dim_text(s) for s in shape[:-2]] == [d.text for d in batch]:
        return v
    if len(shape) < len(batch) + 2:
        v = b.emit("reshape", [v], {"shape": [Dim("1")] * (len(batch) + 2 - len(shape))
                                    + [Dim(dim_text(s)) for s in shape]})
    return b.emit("expand", [v], {"shape": batch + [Dim("-1"), Dim("-1")]})


@handles(aten.linalg_solve_triangular.default)
def solve_triangular(b: Builder, node: torch.fx.Node) -> str:
    a, rhs = node.args[0], node.args[1]
    upper = arg(node, 2, "upper")
    left, unit = arg(node, 3, "left", True), arg(node, 4, "unitriangular", False)
    if not isinstance(upper, bool) or val(a).dtype not in (torch.float32, torch.float64) \
            or val(rhs).dtype != val(a).dtype or val(a).dim() < 2 or val(rhs).dim() < 2:
        raise Unsupported("solve_triangular other than of f32 or f64 matrices")
    result = out(node)
    batch = [Dim(dim_text(s)) for s in result.shape[:-2]]
    av, bv = expanded(b, a, batch), expanded(b, rhs, batch)
    attrs = {"upper": upper if left else not upper, "unitriangular": bool(unit)}
    if left:
        return b.emit("solve_triangular", [av, bv], attrs)
    # X A = B  <=>  Aᵀ Xᵀ = Bᵀ, and Aᵀ's triangle is the other one.
    t = lambda v: b.emit("transpose", [v], {"dim0": -2, "dim1": -1})  # noqa: E731
    return t(b.emit("solve_triangular", [t(av), t(bv)], attrs))
