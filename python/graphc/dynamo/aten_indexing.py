"""The translation table, continued: indexing writes, padding and the view
ops that reorder elements. Functionalisation (AOTAutograd, backend.py)
turns every write through a view into one of these ops on the view's base
— ``m[0:2, 0:2] = 1`` into ``slice_scatter`` twice, ``cache[:, i] = k`` into
``index_put`` — so each writes a new value of the whole base, which graphc
computes as a concat, a ``where`` over a constant mask, or a
``scatter_nd``.

Sizes the element order depends on (a slice's bounds, a flip's length)
must be static here; where they are symbolic the op is left to PyTorch.
"""

from __future__ import annotations

import operator
from typing import Any, List, Optional, Sequence, Tuple

import torch
import torch.fx

from graphc.dynamo.aten_ops import arg, check_indices, handles, norm_dim, out, rank, shape_attr, static_size
from graphc.dynamo.translate import Builder, Dim, Raw, Unsupported, dim_text, dtype_name, val

aten = torch.ops.aten


def constant(b: Builder, values: Any, dtype: torch.dtype) -> str:
    """A tensor literal (nested lists) of `dtype`."""
    t = torch.tensor(values, dtype=dtype)
    text = str(t.tolist()).replace("True", "true").replace("False", "false")
    return b.emit("constant", [], {"value": Raw(text)}, type=f"{dtype_name(dtype)}[{', '.join(map(str, t.shape))}]")


def static_dim(x: Any, dim: int, what: str) -> int:
    size = static_size(x, dim)
    if size is None:
        raise Unsupported(f"{what} along the symbolic dim {dim_text(val(x).shape[dim])}")
    return size


def along(b: Builder, v: str, r: int, dim: int, length: int) -> str:
    """A 1-D value of `length` reshaped to broadcast along `dim` of rank `r`."""
    return b.emit("reshape", [v], {"shape": [Dim(str(length) if k == dim else "1") for k in range(r)]})


def slice_bounds(size: int, start: Optional[int], end: Optional[int], step: int) -> range:
    """The positions x[start:end:step] takes along a dim of `size`, as Python
    (and torch) normalise the bounds."""
    if step <= 0:
        raise Unsupported(f"a slice with step {step}")
    return range(size)[slice(start, end, step)]


def scatter_positions(b: Builder, base: Any, src: str, dim: int, positions: Sequence[int]) -> str:
    """`base` with `src` written at `positions` along `dim` (src's size
    there is len(positions)): a concat when the positions are contiguous,
    else a where over a constant mask of `src` gathered to base's size."""
    size = static_dim(base, dim, "a write")
    r = rank(base)
    pieces: List[str] = []
    if not positions:
        return b.value(base)
    if list(positions) == list(range(positions[0], positions[-1] + 1)):
        first, last = positions[0], positions[-1] + 1
        if first > 0:
            pieces.append(b.emit("slice", [b.value(base)], {"dim": dim, "start": 0, "end": first}))
        pieces.append(src)
        if last < size:
            pieces.append(b.emit("slice", [b.value(base)], {"dim": dim, "start": last, "end": None}))
        return pieces[0] if len(pieces) == 1 else b.emit("concat", pieces, {"dim": dim})
    where_from = [0] * size
    mask = [False] * size
    for k, p in enumerate(positions):
        where_from[p], mask[p] = k, True
    spread = b.emit("index_select", [src, constant(b, where_from, torch.int64)], {"dim": dim})
    selected = along(b, constant(b, mask, torch.bool), r, dim, size)
    return b.emit("where", [selected, spread, b.value(base)])


@handles(aten.slice_scatter.default)
def slice_scatter(b: Builder, node: torch.fx.Node) -> str:
    """base with base[start:end:step] (along dim) replaced by src."""
    base, src = node.args[0], node.args[1]
    dim = norm_dim(arg(node, 2, "dim", 0), rank(base))
    start, end, step = arg(node, 3, "start"), arg(node, 4, "end"), arg(node, 5, "step", 1)
    for v in (start, end, step):
        if v is not None and not isinstance(v, int):
            raise Unsupported("a slice_scatter with symbolic bounds")
    positions = slice_bounds(static_dim(base, dim, "a slice_scatter"), start, end, step)
    return scatter_positions(b, base, b.cast(src, out(node).dtype), dim, positions)


@handles(aten.select_scatter.default)
def select_scatter(b: Builder, node: torch.fx.Node) -> str:
    """base with base.select(dim, index) replaced by src."""
    base, src, dim, index = node.args[:4]
    dim = norm_dim(dim, rank(base))
    if not isinstance(index, int):
        raise Unsupported("a select_scatter at a symbolic index")
    size = static_dim(base, dim, "a select_scatter")
    position = index + size if index < 0 else index
    row = b.emit("unsqueeze", [b.cast(src, out(node).dtype)], {"dim": dim})
    return scatter_positions(b, base, row, dim, [position])


def diagonal_positions(x: Any, offset: int, dim1: int, dim2: int) -> Tuple[List[int], List[int], int, int]:
    """For x.diagonal(offset, dim1, dim2): the dims kept in order, the flat
    positions (over dim1 × dim2) of the diagonal's elements, and the two
    dims' sizes."""
    r = rank(x)
    dim1, dim2 = norm_dim(dim1, r), norm_dim(dim2, r)
    n, m = static_dim(x, dim1, "a diagonal"), static_dim(x, dim2, "a diagonal")
    rows = range(max(0, -offset), min(n, m - offset)) if -n < offset < m else range(0)
    return [d for d in range(r) if d not in (dim1, dim2)], [i * m + i + offset for i in rows], n, m


def flattened(b: Builder, x: Any, kept: List[int], dim1: int, dim2: int, n: int, m: int) -> str:
    """x with dim1 and dim2 moved last and merged into one dim of n*m."""
    r = rank(x)
    v = b.value(x)
    order = kept + [norm_dim(dim1, r), norm_dim(dim2, r)]
    if order != list(range(r)):
        v = b.emit("permute", [v], {"dims": order})
    shape = [Dim(dim_text(val(x).shape[d])) for d in kept] + [Dim(str(n * m))]
    return b.emit("reshape", [v], {"shape": shape})


@handles(aten.diagonal.default)
def diagonal(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    offset, dim1, dim2 = arg(node, 1, "offset", 0), arg(node, 2, "dim1", 0), arg(node, 3, "dim2", 1)
    kept, positions, n, m = diagonal_positions(x, offset, dim1, dim2)
    flat = flattened(b, x, kept, dim1, dim2, n, m)
    return b.emit("index_select", [flat, constant(b, positions, torch.int64)], {"dim": len(kept)})


@handles(aten.diagonal_scatter.default)
def diagonal_scatter(b: Builder, node: torch.fx.Node) -> str:
    base, src = node.args[0], node.args[1]
    offset, dim1, dim2 = arg(node, 2, "offset", 0), arg(node, 3, "dim1", 0), arg(node, 4, "dim2", 1)
    kept, positions, n, m = diagonal_positions(base, offset, dim1, dim2)
    r = rank(base)
    flat = flattened(b, base, kept, dim1, dim2, n, m)
    where_from, mask = [0] * (n * m), [False] * (n * m)
    for k, p in enumerate(positions):
        where_from[p], mask[p] = k, True
    spread = b.emit("index_select", [b.cast(src, out(node).dtype), constant(b, where_from, torch.int64)],
                    {"dim": len(kept)})
    written = b.emit("where", [along(b, constant(b, mask, torch.bool), r - 1, r - 2, n * m), spread, flat])
    order = kept + [norm_dim(dim1, r), norm_dim(dim2, r)]
    shape = [Dim(dim_text(val(base).shape[d])) for d in order]
    v = b.emit("reshape", [written], {"shape": shape})
    if order == list(range(r)):
        return v
    return b.emit("permute", [v], {"dims": [order.index(d) for d in range(r)]})


@handles(aten.as_strided_scatter.default)
def as_strided_scatter(b: Builder, node: torch.fx.Node) -> str:
    """Only the form that replaces the whole base (contiguous strides,
    offset 0, as many elements): src reshaped to the base's shape."""
    base, src, size, stride = node.args[:4]
    if not all(isinstance(v, int) for v in list(size) + list(stride)) or not val(base).is_contiguous():
        raise Unsupported("as_strided_scatter with symbolic sizes or a strided base")
    expected = 1
    for sz, st in reversed(list(zip(size, stride))):
        if sz != 1 and st != expected:
            raise Unsupported("as_strided_scatter of a part of its base")
        expected *= sz
    if arg(node, 4, "storage_offset", 0) not in (0, None) or expected != val(base).numel():
        raise Unsupported("as_strided_scatter of a part of its base")
    return b.emit("reshape", [b.cast(src, out(node).dtype)], {"shape": shape_attr(node)})


def coordinates(b: Builder, present: List[Tuple[int, Any]]) -> Tuple[str, Tuple[Any, ...]]:
    """The index tensors of x[..., i, j, ...] broadcast and stacked into the
    coordinates gather_nd and scatter_nd read ([*broadcast, k]), and the
    broadcast shape."""
    broadcast = torch.broadcast_shapes(*[val(i).shape for _, i in present])
    shape = [Dim(dim_text(s)) for s in broadcast] + [Dim("1")]
    stacked = []
    for _, i in present:
        v = b.cast(i, torch.int64)
        v = b.emit("reshape", [v], {"shape": [Dim(dim_text(s)) for s in val(i).shape] + [Dim("1")]})
        stacked.append(b.emit("expand", [v], {"shape": shape}))
    return (stacked[0] if len(stacked) == 1 else b.emit("concat", stacked, {"dim": -1})), tuple(broadcast)


def indexed_dims_first(b: Builder, x: Any, dims: List[int]) -> Tuple[str, List[int]]:
    """x with the indexed dims moved to the front (in order), and the order."""
    r = rank(x)
    front = dims + [d for d in range(r) if d not in dims]
    moved = b.value(x) if front == list(range(r)) else b.emit("permute", [b.value(x)], {"dims": front})
    return moved, front


def present_indices(indices: Sequence[Any]) -> List[Tuple[int, Any]]:
    present = [(d, i) for d, i in enumerate(indices) if i is not None]
    if any(val(i).dtype == torch.bool for _, i in present):
        raise Unsupported("indexing by a mask (its size depends on the data)")
    return present


@handles(aten.index.Tensor)
def index(b: Builder, node: torch.fx.Node) -> str:
    """``x[..., i, j, ...]``: one index tensor is an index_select; several
    are broadcast, stacked and read by a gather_nd over the indexed dims
    moved to the front, the result's dims then put where torch puts them
    (in place of the indexed dims when those are adjacent, else first)."""
    x, indices = node.args
    present = present_indices(indices)
    for d, i in present:
        check_indices(b, node, i, val(x).shape[d], negative_ok=True)
    if len(present) == 1:
        d, i = present[0]
        return b.emit("index_select", [b.value(x), b.value(i)], {"dim": d})
    dims = [d for d, _ in present]
    coords, broadcast = coordinates(b, present)
    moved, _ = indexed_dims_first(b, x, dims)
    gathered = b.emit("gather_nd", [moved, coords])
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if not adjacent or dims[0] == 0:
        return gathered
    nb, before, rest = len(broadcast), dims[0], rank(x) - len(dims)
    order = [nb + k for k in range(before)] + list(range(nb)) + [nb + k for k in range(before, rest)]
    return b.emit("permute", [gathered], {"dims": order})


@handles(aten.index_put.default)
def index_put(b: Builder, node: torch.fx.Node) -> str:
    """``x[..., i, j, ...] = values`` (``+=`` with accumulate): a scatter_nd
    into x with the indexed dims moved to the front, values broadcast to
    the shape x[indices] has and laid out as scatter_nd reads updates
    (the index dims first), then the dims moved back."""
    x, indices, values = node.args[:3]
    accumulate = bool(arg(node, 3, "accumulate", False))
    present = present_indices(indices)
    for d, i in present:
        check_indices(b, node, i, val(x).shape[d], negative_ok=True)
    if (written_back_into_input(node) and len(present) == 1 and rank(present[0][1]) == 1
            and all(static_size(x, k) is not None for k in range(present[0][0]))):
        return index_put_in_place(b, node, x, present[0], values, accumulate)
    dims = [d for d, _ in present]
    coords, broadcast = coordinates(b, present)
    moved, front = indexed_dims_first(b, x, dims)
    sizes = val(x).shape
    rest = [d for d in range(rank(x)) if d not in dims]
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    nb, before = len(broadcast), (dims[0] if adjacent else 0)
    # x[indices]'s shape as torch lays it out, which values broadcast to.
    indexed = [sizes[d] for d in rest[:before]] + list(broadcast) + [sizes[d] for d in rest[before:]]
    v = b.cast(values, out(node).dtype)
    if list(val(values).shape) != indexed:
        v = b.emit("expand", [v], {"shape": [Dim(dim_text(s)) for s in indexed]})
    if before:
        order = list(range(before, before + nb)) + list(range(before)) + list(range(before + nb, len(indexed)))
        v = b.emit("permute", [v], {"dims": order})
    written = b.emit("scatter_nd", [moved, coords, v], {"reduction": "add" if accumulate else None})
    if front == list(range(rank(x))):
        return written
    return b.emit("permute", [written], {"dims": [front.index(d) for d in range(rank(x))]})


def written_back_into_input(node: torch.fx.Node) -> bool:
    """Whether `node`'s result is copied into its own base, a graph input
    (``cache.index_copy_(2, pos, k)`` functionalised): graphc then writes it
    in place, and a scatter_nd straight into the input is a store of the
    new rows (codegen/BufferAssignment.h)."""
    base = node.args[0]
    return isinstance(base, torch.fx.Node) and base.op == "placeholder" and any(
        u.target is aten.copy_.default and u.args[0] is base and u.args[1] is node for u in node.users)


def index_put_in_place(b: Builder, node: torch.fx.Node, x: Any, present: Tuple[int, Any], values: Any,
                       accumulate: bool) -> str:
    """``x[:, :, i] = values`` (one 1-D index on dim d) as one scatter_nd
    into x itself, without moving dims: the coordinates name every position
    of the dims before d (iota) with each index, so the updates are
    x[:, :, i]'s rows as torch lays them out. Its result written back into
    x is then a store of those rows alone — a KV cache's new positions."""
    d, index = present
    sizes = val(x).shape
    lead = [int(s) for s in sizes[:d]]  # static (index_put checks)
    n = val(index).shape[0]
    grid = [Dim(str(s)) for s in lead] + [Dim(dim_text(n))]
    column = f"i64[{', '.join(str(s) for s in lead + [dim_text(n)])}, 1]"
    columns = [b.emit("iota", [], {"dim": k, "start": 0, "step": 1}, type=column) for k in range(d)]
    i = b.emit("reshape", [b.cast(index, torch.int64)], {"shape": [Dim("1")] * d + [Dim(dim_text(n)), Dim("1")]})
    columns.append(b.emit("expand", [i], {"shape": grid + [Dim("1")]}))
    coords = columns[0] if len(columns) == 1 else b.emit("concat", columns, {"dim": -1})
    indexed = list(sizes[:d]) + [n] + list(sizes[d + 1:])  # x[..., i, ...]'s shape, which values broadcast to
    v = b.cast(values, out(node).dtype)
    if list(val(values).shape) != indexed:
        v = b.emit("expand", [v], {"shape": [Dim(dim_text(s)) for s in indexed]})
    return b.emit("scatter_nd", [b.value(x), coords, v], {"reduction": "add" if accumulate else None})


def element_coordinates(b: Builder, index: Any, dim: int) -> str:
    """For torch.scatter's `index` (rank r): the coordinates [*index.shape, r]
    of each element's destination — `index` along `dim`, the element's own
    position along every other dim."""
    shape = val(index).shape
    r = len(shape)
    type_ = f"i64[{', '.join(dim_text(s) for s in shape)}, 1]"
    columns = []
    for k in range(r):
        if k == dim:
            i = b.emit("reshape", [b.cast(index, torch.int64)], {"shape": [Dim(dim_text(s)) for s in shape] + [Dim("1")]})
        else:
            i = b.emit("iota", [], {"dim": k, "start": 0, "step": 1}, type=type_)
        columns.append(i)
    return columns[0] if r == 1 else b.emit("concat", columns, {"dim": -1})


def source_for(b: Builder, src: Any, index: Any, dtype: torch.dtype) -> str:
    """The part of torch.scatter's `src` its `index` reads: src[:n0, :n1, ...]."""
    v = b.cast(src, dtype)
    for k, (have, want) in enumerate(zip(val(src).shape, val(index).shape)):
        if have is not want and have != want:
            if not isinstance(want, int):
                raise Unsupported("a scatter whose src is larger than its index along a symbolic dim")
            v = b.emit("slice", [v], {"dim": k, "start": 0, "end": want})
    return v


REDUCTIONS = {"sum": "add", "add": "add", "prod": "mul", "multiply": "mul", "amax": "max", "amin": "min"}
IDENTITIES = {"add": 0, "mul": 1, "max": float("-inf"), "min": float("inf")}


@handles(aten.scatter.src, aten.scatter.value, aten.scatter.reduce, aten.scatter.value_reduce,
         aten.scatter_add.default, aten.scatter_reduce.two)
def scatter(b: Builder, node: torch.fx.Node) -> str:
    """torch.scatter and its reductions (scatter_add, scatter_reduce) as a
    scatter_nd whose coordinates say each element's destination. Without
    include_self, the written places start from the reduction's identity."""
    x, dim, index = node.args[:3]
    dim = norm_dim(dim, rank(x))
    dtype = out(node).dtype
    third = node.args[3] if len(node.args) > 3 else node.kwargs.get("src", node.kwargs.get("value"))
    if node.target in (aten.scatter.value, aten.scatter.value_reduce):
        updates = b.emit("full", [], {"value": scalar_value(third, dtype)},
                         type=f"{dtype_name(dtype)}[{', '.join(dim_text(s) for s in val(index).shape)}]")
    else:
        updates = source_for(b, third, index, dtype)
    reduce = None
    if node.target is aten.scatter_add.default:
        reduce = "add"
    elif node.target in (aten.scatter.reduce, aten.scatter.value_reduce, aten.scatter_reduce.two):
        name = arg(node, 4, "reduce")
        if name not in REDUCTIONS:
            raise Unsupported(f"a scatter with reduce={name!r}")
        reduce = REDUCTIONS[name]
    check_indices(b, node, index, val(x).shape[dim], negative_ok=False)
    coords = element_coordinates(b, index, dim)
    base = b.value(x)
    if node.target is aten.scatter_reduce.two and not arg(node, 5, "include_self", True):
        if dtype == torch.bool or (not dtype.is_floating_point and reduce in ("max", "min")):
            raise Unsupported(f"scatter_reduce without include_self on {dtype}")
        fill = b.emit("full", [], {"value": scalar_value(IDENTITIES[reduce], dtype)},
                      type=f"{dtype_name(dtype)}[{', '.join(dim_text(s) for s in val(index).shape)}]")
        base = b.emit("scatter_nd", [base, coords, fill])
    return b.emit("scatter_nd", [base, coords, updates], {"reduction": reduce})


def scalar_value(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.fx.Node):
        raise Unsupported("a fill value that is a tensor")
    if dtype == torch.bool:
        return bool(value)
    return float(value) if dtype.is_floating_point else int(value)


@handles(aten.fill.Scalar)
def fill(b: Builder, node: torch.fx.Node) -> str:
    o = out(node)
    return b.emit("full", [], {"value": scalar_value(node.args[1], o.dtype)},
                  type=f"{dtype_name(o.dtype)}[{', '.join(dim_text(s) for s in o.shape)}]")


@handles(aten.constant_pad_nd.default)
def constant_pad_nd(b: Builder, node: torch.fx.Node) -> str:
    """F.pad(x, pads, value): per padded dim (pads run from the last dim
    back, a (before, after) pair each), a concat of constant blocks around
    x; a negative pad crops instead."""
    x, pads = node.args[0], list(node.args[1])
    value = arg(node, 2, "value", 0)
    dtype = out(node).dtype
    v = b.value(x)
    shape = list(val(x).shape)
    for k in range(len(pads) // 2):
        dim = len(shape) - 1 - k
        before, after = pads[2 * k], pads[2 * k + 1]
        if not isinstance(before, int) or not isinstance(after, int):
            raise Unsupported("padding by a symbolic amount")
        if before == 0 and after == 0:
            continue
        if before < 0 or after < 0:
            size = static_dim(x, dim, "a negative pad")
            v = b.emit("slice", [v], {"dim": dim, "start": max(0, -before), "end": size - max(0, -after)})
            shape[dim] = size - max(0, -before) - max(0, -after)
        pieces = []
        for amount in (before, after):
            if amount > 0:
                block = shape[:dim] + [amount] + shape[dim + 1:]
                pieces.append(b.emit("full", [], {"value": scalar_value(value, dtype)},
                                     type=f"{dtype_name(dtype)}[{', '.join(dim_text(s) for s in block)}]"))
            else:
                pieces.append(None)
        parts = [p for p in (pieces[0], v, pieces[1]) if p is not None]
        if len(parts) > 1:
            v = b.emit("concat", parts, {"dim": dim})
        shape[dim] = shape[dim] + max(0, before) + max(0, after)
    return v


@handles(aten.repeat.default)
def repeat(b: Builder, node: torch.fx.Node) -> str:
    """x.repeat(r0, r1, ...): each dim k becomes r_k copies of it — a new
    dim of r_k before it, expanded, then merged."""
    x, repeats = node.args[0], list(node.args[1])
    if not all(isinstance(r, int) for r in repeats):
        raise Unsupported("repeat by symbolic counts")
    shape = [1] * (len(repeats) - rank(x)) + list(val(x).shape)
    v = b.emit("reshape", [b.value(x)], {"shape": [Dim(dim_text(s)) for s in shape]}) if len(shape) != rank(x) \
        else b.value(x)
    split = []
    for r, s in zip(repeats, shape):
        split += [1, s]
    v = b.emit("reshape", [v], {"shape": [Dim(dim_text(s)) for s in split]})
    expanded = []
    for r, s in zip(repeats, shape):
        expanded += [r, s]
    v = b.emit("expand", [v], {"shape": [Dim(dim_text(s)) for s in expanded]})
    return b.emit("reshape", [v], {"shape": shape_attr(node)})


@handles(aten.flip.default)
def flip(b: Builder, node: torch.fx.Node) -> str:
    x, dims = node.args[0], node.args[1]
    v = b.value(x)
    for d in dims:
        d = norm_dim(d, rank(x))
        static_dim(x, d, "a flip")
        # x[..., ::-1, ...]: an affine read (size - 1 - i) that fuses with
        # the permutes and reshapes around it, where an index_select of the
        # reversed positions would read an index tensor per element.
        v = b.emit("slice", [v], {"dim": d, "step": -1})
    return v


@handles(aten.unfold.default)
def unfold(b: Builder, node: torch.fx.Node) -> str:
    """x.unfold(dim, size, step): the windows along dim as a new last dim."""
    x, dim, size, step = node.args
    r = rank(x)
    dim = norm_dim(dim, r) if r else 0
    length = static_dim(x, dim, "an unfold")
    count = (length - size) // step + 1
    windows = [[w * step + k for k in range(size)] for w in range(count)]
    v = b.emit("index_select", [b.value(x), constant(b, windows, torch.int64)], {"dim": dim})
    # index_select put [count, size] at dim; the window's elements go last.
    order = list(range(dim + 1)) + list(range(dim + 2, r + 1)) + [dim + 1]
    return v if order == list(range(r + 1)) else b.emit("permute", [v], {"dims": order})



# Rows sorted by counting ranks: quadratic in the row's length, so longer
# rows stay in PyTorch.
MAX_SORT = 4096


def ordered_before(b: Builder, vj: str, vi: str, floating: bool, descending: bool) -> Tuple[str, str]:
    """Whether element j sorts strictly before element i, and whether the
    two tie, with torch's order: NaN above every number."""
    ahead = b.emit("gt" if descending else "lt", [vj, vi])
    tie = b.emit("eq", [vj, vi])
    if floating:
        nan_j, nan_i = b.emit("ne", [vj, vj]), b.emit("ne", [vi, vi])
        if descending:  # NaN first
            ahead = b.emit("logical_or", [ahead, b.emit("logical_and", [nan_j, b.emit("logical_not", [nan_i])])])
        else:  # NaN last: a number sorts before a NaN
            ahead = b.emit("logical_or", [ahead, b.emit("logical_and", [nan_i, b.emit("logical_not", [nan_j])])])
        tie = b.emit("logical_or", [tie, b.emit("logical_and", [nan_i, nan_j])])
    return ahead, tie


def sorted_rows(b: Builder, x: Any, dim: int, descending: bool, count: int) -> tuple:
    """The first `count` elements of x sorted along dim, and their indices:
    each element's rank is how many sort before it (ties by index, a
    stable sort), and output k takes the element whose rank is k."""
    r = rank(x)
    dim = norm_dim(dim, r) if r else 0
    if r == 0:
        return b.value(x), b.emit("full", [], {"value": 0}, type="i64[]")
    n = static_dim(x, dim, "a sort")
    if n > MAX_SORT:
        raise Unsupported(f"a sort of rows of {n} (graphc sorts rows of up to {MAX_SORT} by counting ranks)")
    last = r - 1
    v = b.value(x) if dim == last else b.emit("transpose", [b.value(x)], {"dim0": dim, "dim1": last})
    vi, vj = b.emit("unsqueeze", [v], {"dim": -1}), b.emit("unsqueeze", [v], {"dim": -2})
    ahead, tie = ordered_before(b, vj, vi, val(x).dtype.is_floating_point, descending)
    i = b.emit("iota", [], {"dim": 0, "start": 0, "step": 1}, type=f"i64[{n}, 1]")
    j = b.emit("iota", [], {"dim": 1, "start": 0, "step": 1}, type=f"i64[1, {n}]")
    before = b.emit("logical_or", [ahead, b.emit("logical_and", [tie, b.emit("lt", [j, i])])])
    ranks = b.emit("sum", [b.emit("cast", [before], {"dtype": Raw("i64")})], {"dims": [-1], "keepdim": False})
    k = b.emit("iota", [], {"dim": 0, "start": 0, "step": 1}, type=f"i64[{count}, 1]")
    chosen = b.emit("eq", [b.emit("unsqueeze", [ranks], {"dim": -2}), k])  # [..., count, n]
    zero = b.emit("full", [], {"value": 0}, type=f"i64[1, {n}]")
    indices = b.emit("sum", [b.emit("where", [chosen, j, zero])], {"dims": [-1], "keepdim": False})
    values = b.emit("gather", [v, indices], {"dim": last})
    if dim != last:
        values = b.emit("transpose", [values], {"dim0": dim, "dim1": last})
        indices = b.emit("transpose", [indices], {"dim0": dim, "dim1": last})
    return values, indices


def indices_read(node: torch.fx.Node) -> bool:
    """Whether anything reads a sort's or topk's indices (output 1)."""
    return any(u.target is operator.getitem and u.args[1] == 1 for u in node.users)


@handles(aten.sort.default, aten.sort.stable)
def sort(b: Builder, node: torch.fx.Node) -> tuple:
    """A stable sort (ties in index order). Without stable=True PyTorch
    leaves the order of equal elements unspecified (its CPU kernel's
    differs from its CUDA kernel's and, past 64 elements, from the stable
    order): graphc's, the stable order, is one of the orders it allows —
    a mixture-of-experts layer sorting tokens by expert gives the same
    outputs with any of them. Where the indices leave graphc the sort
    stays with PyTorch (partition.unstable_sort_indices_escape)."""
    x = node.args[0]
    if node.target is aten.sort.stable:
        dim, descending = node.kwargs.get("dim", -1), node.kwargs.get("descending", False)
    else:
        dim, descending = arg(node, 1, "dim", -1), arg(node, 2, "descending", False)
    size = val(x).shape[norm_dim(dim, rank(x))] if rank(x) else 1
    if not isinstance(size, int):
        raise Unsupported("a sort along a symbolic dim")
    return sorted_rows(b, x, dim, bool(descending), size)


@handles(aten.topk.default)
def topk(b: Builder, node: torch.fx.Node) -> tuple:
    x, k = node.args[0], node.args[1]
    dim, largest = arg(node, 2, "dim", -1), arg(node, 3, "largest", True)
    if not isinstance(k, int):
        raise Unsupported("topk of a symbolic k")
    if not val(x).dtype.is_floating_point and indices_read(node):
        # Integers tie often, and which of equal elements topk picks is
        # PyTorch's implementation's (scores, floats, seldom tie).
        raise Unsupported("topk of integers whose indices are read: PyTorch picks among equal elements its own way")
    return sorted_rows(b, x, dim, bool(largest), k)
