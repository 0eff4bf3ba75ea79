"""The decomposition table the backend lowers Dynamo's graph with.

ATen's core decompositions (``torch._decomp.core_aten_decompositions``,
the set torch.export and Inductor start from), less the ops graphc has
as whole ops (layer, group and batch norm, GELU, softmax, convolution,
pooling, SiLU): those reach graphc undecomposed and become one graphc
op each, which its passes fuse and its backends run as one kernel.
"""

from __future__ import annotations

import functools
from typing import Any, Dict

import torch
from torch._decomp import core_aten_decompositions

aten = torch.ops.aten

# Kept whole: graphc has each of them as an op (see aten_ops.py).
KEPT = (
    aten.native_layer_norm.default,
    aten.native_group_norm.default,
    aten._native_batch_norm_legit_no_training.default,
    aten.gelu.default,
    aten._softmax.default,
    aten._log_softmax.default,
    aten.convolution.default,
    aten.max_pool2d_with_indices.default,
    aten.avg_pool2d.default,
    aten.silu.default,
    aten.clamp_min.default,
    aten.clamp_max.default,
    aten.embedding.default,
    aten.upsample_nearest2d.default,
    aten.upsample_nearest2d.vec,
)


# Added from torch's full table: batch norm over the batch's own statistics
# (BatchNorm with track_running_stats=False, in eval mode too), which
# writes no running statistics.
ADDED = (aten._native_batch_norm_legit.no_stats,)


def eye(n: int, m: Any = None, *, dtype: Any = None, layout: Any = None, device: Any = None,
        pin_memory: bool = False, requires_grad: bool = False) -> torch.Tensor:
    """torch.eye as a comparison of int64 positions: torch's own reference
    counts them in the narrowest integer type that holds n (uint8 for the
    small matrices of chunked attention), which graphc does not have."""
    rows = torch.arange(n, dtype=torch.int64, device=device).unsqueeze(-1)
    columns = torch.arange(n if m is None else m, dtype=torch.int64, device=device)
    return (rows == columns).to(torch.get_default_dtype() if dtype is None else dtype)


# Replaced with graphc's own (each function above says why).
REPLACED = {aten.eye.default: eye, aten.eye.m: eye}


def per_tensor(base: Any) -> Any:
    """A foreach op (``_foreach_add.Scalar(tensors, 1.0)``, what optimizers
    with foreach=True call) as its op on each tensor of the lists, so each
    update is ordinary pointwise work that graphc fuses — all of a
    parameter group's into one kernel where they share a shape."""

    def each(*args: Any, **kwargs: Any) -> Any:
        count = next(len(a) for a in args if isinstance(a, (list, tuple)))
        if base in (aten.addcmul, aten.addcdiv) and len(args) == 4:  # their value is keyword-only on one tensor
            args, kwargs = args[:3], dict(kwargs, value=args[3])
        pick = lambda a, i: a[i] if isinstance(a, (list, tuple)) else a  # noqa: E731
        return [base(*[pick(a, i) for a in args], **{k: pick(v, i) for k, v in kwargs.items()}) for i in range(count)]

    return each


def foreach_decompositions() -> Dict[Any, Any]:
    """Every functional foreach overload whose op on one tensor ATen has
    (functionalisation has already made the in-place ``_foreach_add_`` of
    an optimizer's step these)."""
    table: Dict[Any, Any] = {}
    for name in dir(aten):
        if not name.startswith("_foreach_") or name.endswith("_"):
            continue
        base = getattr(aten, name[len("_foreach_"):], None)
        if base is None:
            continue
        packet = getattr(aten, name)
        for overload in packet.overloads():
            table[getattr(packet, overload)] = per_tensor(base)
    return table


@functools.lru_cache(maxsize=1)
def decomposition_table() -> Dict[Any, Any]:
    from torch._decomp import decomposition_table as full

    table = dict(core_aten_decompositions())
    for op in KEPT:
        table.pop(op, None)
    for op in ADDED:
        table[op] = full[op]
    table.update(REPLACED)
    table.update(foreach_decompositions())
    return table
