"""The translation table, continued: a mixture-of-experts layer's routing
and expert matmuls, as transformers' ``grouped_mm_experts_forward`` writes
them — sort the (token, expert) pairs by expert, count each expert's rows
with ``histc``, take the cumulative counts as offsets, and run one matmul
per expert over its rows (``grouped_mm``).

``histc`` becomes a comparison against its bin edges (the ones torch's
kernel computes, ``linspace(min, max, bins + 1)`` in the input's dtype) and
a count per bin; ``grouped_mm_fallback`` (transformers' custom op) and
``aten._grouped_mm`` of a 2-d input and 3-d weights become graphc's
``grouped_mm``. The custom op exists only once transformers is imported:
``register_custom_ops`` adds it to the table when it does.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

from graphc.dynamo.aten_ops import HANDLERS, arg, handles, out
from graphc.dynamo.aten_indexing import constant
from graphc.dynamo.translate import Builder, Raw, Unsupported, dtype_name, literal, val

aten = torch.ops.aten


@handles(aten.histc.default)
def histc(b: Builder, node: torch.fx.Node) -> str:
    """Counts of x's elements per bin of [min, max] cut into `bins` equal
    bins, as torch counts them: an element's bin is the last edge at or
    below it (the last bin holds max too), elements outside the range
    (and NaN) count nowhere."""
    x = node.args[0]
    bins, low, high = arg(node, 1, "bins", 100), arg(node, 2, "min", 0), arg(node, 3, "max", 0)
    dtype = val(x).dtype
    if not all(isinstance(v, (int, float)) for v in (bins, low, high)):
        raise Unsupported("histc with symbolic bins or bounds")
    if low == high:
        raise Unsupported("histc over the data's own range (min == max): the bins depend on the values")
    if not dtype.is_floating_point or low > high or bins <= 0:
        raise Unsupported(f"histc of {dtype} over [{low}, {high}] in {bins} bins")
    edges = torch.linspace(low, high, bins + 1, dtype=dtype)
    xs = b.emit("reshape", [b.value(x)], {"shape": [Raw("-1"), Raw("1")]})  # [N, 1]
    at_or_below = b.emit("ge", [xs, constant(b, [edges.tolist()], dtype)])  # [N, bins + 1]
    passed = b.emit("sum", [b.emit("cast", [at_or_below], {"dtype": Raw("i64")})], {"dims": [-1], "keepdim": True})
    bin_of = b.emit("minimum", [b.emit("sub", [passed, "1"]), literal(bins - 1, torch.int64)])
    inside = b.emit("logical_and", [b.emit("ge", [xs, literal(float(edges[0]), dtype)]),
                                    b.emit("le", [xs, literal(float(edges[-1]), dtype)])])
    each = b.emit("iota", [], {"dim": 1, "start": 0, "step": 1}, type=f"i64[1, {bins}]")
    hit = b.emit("logical_and", [b.emit("eq", [bin_of, each]), inside])  # [N, bins]
    counts = b.emit("sum", [b.emit("cast", [hit], {"dtype": Raw("i64")})], {"dims": [0], "keepdim": False})
    return b.emit("cast", [counts], {"dtype": Raw(dtype_name(dtype))})


def grouped_mm(b: Builder, node: torch.fx.Node, x: Any, w: Any, offs: Any) -> str:
    if not all(isinstance(v, torch.fx.Node) for v in (x, w, offs)):
        raise Unsupported("grouped_mm without offsets")
    if val(x).dim() != 2 or val(w).dim() != 3 or val(offs).dim() != 1:
        raise Unsupported("grouped_mm other than a 2-d input, 3-d weights and 1-d offsets")
    if val(x).dtype != val(w).dtype or val(x).dtype != out(node).dtype:
        raise Unsupported("grouped_mm with mixed dtypes")
    if val(offs).dtype not in (torch.int32, torch.int64):
        raise Unsupported(f"grouped_mm offsets of {val(offs).dtype}")
    base = transposed_from(w)
    if base is not None and base in b.values:  # [E, n, k] weights read as they are, not copied transposed
        return b.emit("grouped_mm", [b.value(x), b.value(base), b.value(offs)], {"transposed": True})
    return b.emit("grouped_mm", [b.value(x), b.value(w), b.value(offs)])


def transposed_from(w: torch.fx.Node) -> Any:
    """The 3-d tensor w is the transpose of in its last two dims (a linear
    layer's [out, in] experts as [in, out]), or None."""
    if w.target is aten.transpose.int and isinstance(w.args[0], torch.fx.Node) and val(w.args[0]).dim() == 3 \
            and sorted(d % 3 for d in w.args[1:3]) == [1, 2]:
        return w.args[0]
    if w.target is aten.permute.default and isinstance(w.args[0], torch.fx.Node) and \
            [d % 3 for d in w.args[1]] == [0, 2, 1]:
        return w.args[0]
    return None


@handles(aten._grouped_mm.default)
def aten_grouped_mm(b: Builder, node: torch.fx.Node) -> str:
    if arg(node, 3, "bias") is not None:
        raise Unsupported("_grouped_mm with a bias")
    return grouped_mm(b, node, node.args[0], node.args[1], arg(node, 2, "offs"))


def transformers_grouped_mm(b: Builder, node: torch.fx.Node) -> str:
    """transformers' grouped_mm_fallback(input, weight, offs): rows past the
    last offset are zero, as the op leaves them."""
    return grouped_mm(b, node, node.args[0], node.args[1], arg(node, 2, "offs"))


def register_custom_ops() -> None:
    """Adds the custom ops that exist now (transformers registers its own
    on import) to the table."""
    namespace = getattr(torch.ops, "transformers", None)
    try:
        op = namespace.grouped_mm_fallback.default if namespace is not None else None
    except (AttributeError, RuntimeError):
        op = None
    if op is not None and op not in HANDLERS:
        HANDLERS[op] = transformers_grouped_mm
