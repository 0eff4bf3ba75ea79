"""What each core ATen op becomes in graphc: the translation table.

One handler per op overload, ``handler(builder, node) -> value``: it reads
the node's arguments and fake-tensor metadata and emits graphc statements
(``translate.Builder.emit``), returning the value (or a tuple of values
for an op with several outputs, which ``getitem`` nodes pick from). A
handler raises ``Unsupported`` for a form graphc does not take (an
``addmm`` with ``beta != 1``); the partitioner asks every node that way,
so an op is supported exactly when it translates.

ATen's type promotion is explicit here: graphc's operands must have one
dtype, so a handler casts its operands to the dtype ATen computes in.
"""

from __future__ import annotations

import operator
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.fx
from torch.fx.experimental.symbolic_shapes import statically_known_true

from graphc.dynamo.translate import Builder, Dim, Handler, Raw, Unsupported, dim_text, dtype_name, literal, type_text, val

aten = torch.ops.aten
HANDLERS: Dict[Any, Handler] = {}


def handles(*targets: Any):
    def register(fn: Handler) -> Handler:
        for t in targets:
            HANDLERS[t] = fn
        return fn

    return register


def arg(node: torch.fx.Node, index: int, name: str, default: Any = None) -> Any:
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def out(node: torch.fx.Node) -> torch.Tensor:
    v = val(node)
    if not isinstance(v, torch.Tensor):
        raise Unsupported(f"{node.name} does not produce one tensor")
    return v


def shape_attr(node: torch.fx.Node) -> List[Dim]:
    return [Dim(dim_text(s)) for s in out(node).shape]


def rank(node: Any) -> int:
    return val(node).dim()


def norm_dim(d: int, r: int) -> int:
    return d + r if d < 0 else d


# --- pointwise ---------------------------------------------------------------

UNARY = {
    aten.abs.default: "abs", aten.cos.default: "cos", aten.exp.default: "exp", aten.log.default: "log",
    aten.neg.default: "neg", aten.relu.default: "relu", aten.rsqrt.default: "rsqrt",
    aten.sigmoid.default: "sigmoid", aten.sin.default: "sin", aten.sqrt.default: "sqrt",
    aten.tanh.default: "tanh", aten.erf.default: "erf", aten.reciprocal.default: "reciprocal",
    aten.floor.default: "floor", aten.ceil.default: "ceil", aten.round.default: "round",
    aten.silu.default: "silu", aten.trunc.default: "trunc", aten.tan.default: "tan", aten.asin.default: "asin",
    aten.acos.default: "acos", aten.atan.default: "atan", aten.sinh.default: "sinh", aten.cosh.default: "cosh",
    aten.asinh.default: "asinh", aten.acosh.default: "acosh", aten.atanh.default: "atanh",
    aten.expm1.default: "expm1", aten.log1p.default: "log1p", aten.log2.default: "log2",
    aten.log10.default: "log10", aten.sign.default: "sign",
}
INTEGER_UNARY = {"abs", "neg", "relu", "sign"}
ROUNDING = {"floor", "ceil", "round", "trunc"}  # of an integer: the integer


def unary(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    dtype = out(node).dtype
    op = UNARY[node.target]
    if not dtype.is_floating_point and op in ROUNDING:
        return b.value(x)
    if not dtype.is_floating_point and op not in INTEGER_UNARY:
        raise Unsupported(f"{node.target} of {dtype}")
    if dtype == torch.bool:
        raise Unsupported(f"{node.target} of bool")
    return b.emit(op, [b.cast(x, dtype)])


for _t in UNARY:
    HANDLERS[_t] = unary


@handles(aten.gelu.default)
def gelu(b: Builder, node: torch.fx.Node) -> str:
    return b.emit("gelu", [b.value(node.args[0])], {"approximate": node.kwargs.get("approximate", "none")})


@handles(aten.logical_not.default, aten.bitwise_not.default)
def logical_not(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    if val(x).dtype != torch.bool:
        if node.target is aten.bitwise_not.default:
            raise Unsupported("bitwise_not of integers")
        return b.emit("eq", [b.value(x), literal(0, val(x).dtype)])
    return b.emit("logical_not", [b.value(x)])


ARITHMETIC = {
    aten.add.Tensor: "add", aten.add.Scalar: "add", aten.sub.Tensor: "sub", aten.sub.Scalar: "sub",
    aten.mul.Tensor: "mul", aten.mul.Scalar: "mul", aten.div.Tensor: "div", aten.div.Scalar: "div",
    aten.pow.Tensor_Scalar: "pow", aten.pow.Tensor_Tensor: "pow", aten.pow.Scalar: "pow",
    aten.maximum.default: "maximum", aten.minimum.default: "minimum", aten.atan2.default: "atan2",
    aten.fmod.Tensor: "fmod", aten.fmod.Scalar: "fmod", aten.remainder.Tensor: "remainder",
    aten.remainder.Scalar: "remainder", aten.remainder.Scalar_Tensor: "remainder",
    aten.floor_divide.default: "floor_divide", aten.floor_divide.Scalar: "floor_divide",
}


def arithmetic(b: Builder, node: torch.fx.Node) -> str:
    op = ARITHMETIC[node.target]
    dtype = out(node).dtype
    x, y = node.args[0], node.args[1]
    if op == "pow" and not dtype.is_floating_point:
        raise Unsupported("integer pow")
    if op in ("div", "atan2") and not dtype.is_floating_point:
        raise Unsupported(f"integer {op}")
    if dtype == torch.bool:  # torch's arithmetic on bools: + is or, * is and
        bools = {"add": "logical_or", "maximum": "logical_or", "mul": "logical_and", "minimum": "logical_and"}
        if op not in bools or node.kwargs.get("alpha", 1) != 1 or not all(
                isinstance(t, torch.fx.Node) for t in (x, y)):
            raise Unsupported(f"{op} of bools")
        return b.emit(bools[op], [b.cast(x, dtype), b.cast(y, dtype)])
    alpha = node.kwargs.get("alpha", 1)
    ys = b.cast(y, dtype)
    if alpha != 1:
        ys = b.emit("mul", [ys, literal(alpha, dtype)])
    return b.emit(op, [b.cast(x, dtype), ys])


for _t in ARITHMETIC:
    HANDLERS[_t] = arithmetic


@handles(aten.div.Tensor_mode, aten.div.Scalar_mode)
def div_mode(b: Builder, node: torch.fx.Node) -> str:
    """torch.div with rounding_mode: "floor" is floor_divide; "trunc" is
    trunc(a / b) on floats and, on integers, the floor division of
    a - fmod(a, b), a multiple of b (so exact)."""
    mode = node.kwargs.get("rounding_mode")
    dtype = out(node).dtype
    x, y = b.cast(node.args[0], dtype), b.cast(node.args[1], dtype)
    if mode is None:
        return b.emit("div", [x, y])
    if mode == "floor":
        return b.emit("floor_divide", [x, y])
    if dtype.is_floating_point:
        return b.emit("trunc", [b.emit("div", [x, y])])
    return b.emit("floor_divide", [b.emit("sub", [x, b.emit("fmod", [x, y])]), y])


@handles(aten.isnan.default, aten.isinf.default, aten.isfinite.default)
def float_class(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    dtype = val(x).dtype
    if not dtype.is_floating_point:  # integers are never NaN or infinite
        return b.emit("full", [], {"value": node.target is aten.isfinite.default}, type=type_text(out(node)))
    v = b.value(x)
    if node.target is aten.isnan.default:
        return b.emit("ne", [v, v])
    infinite = b.emit("eq", [b.emit("abs", [v]), "inf"])
    if node.target is aten.isinf.default:
        return infinite
    return b.emit("logical_not", [b.emit("logical_or", [infinite, b.emit("ne", [v, v])])])


@handles(aten.hardtanh.default)
def hardtanh(b: Builder, node: torch.fx.Node) -> str:
    lo, hi = arg(node, 1, "min_val", -1.0), arg(node, 2, "max_val", 1.0)
    return b.emit("clamp", [b.value(node.args[0])], {"min": float(lo), "max": float(hi)})


@handles(aten.leaky_relu.default)
def leaky_relu(b: Builder, node: torch.fx.Node) -> str:
    x = b.value(node.args[0])
    slope = float(arg(node, 1, "negative_slope", 0.01))
    return b.emit("where", [b.emit("gt", [x, "0.0"]), x, b.emit("mul", [x, repr(slope)])])


@handles(aten.elu.default)
def elu(b: Builder, node: torch.fx.Node) -> str:
    """scale * (x > 0 ? x : alpha * expm1(x * input_scale))."""
    x = b.value(node.args[0])
    alpha, scale, input_scale = (float(arg(node, k, n, 1.0)) for k, n in ((1, "alpha"), (2, "scale"),
                                                                             (3, "input_scale")))
    negative = b.emit("mul", [b.emit("expm1", [b.emit("mul", [x, repr(input_scale)])]), repr(alpha)])
    y = b.emit("where", [b.emit("gt", [x, "0.0"]), x, negative])
    return y if scale == 1.0 else b.emit("mul", [y, repr(scale)])


@handles(aten.clamp.Tensor)
def clamp_tensor(b: Builder, node: torch.fx.Node) -> str:
    dtype = out(node).dtype
    v = b.cast(node.args[0], dtype)
    lo, hi = arg(node, 1, "min"), arg(node, 2, "max")
    if lo is not None:
        v = b.emit("maximum", [v, b.cast(lo, dtype)])
    if hi is not None:
        v = b.emit("minimum", [v, b.cast(hi, dtype)])
    return v


COMPARISON = {
    aten.eq.Tensor: "eq", aten.eq.Scalar: "eq", aten.ne.Tensor: "ne", aten.ne.Scalar: "ne",
    aten.lt.Tensor: "lt", aten.lt.Scalar: "lt", aten.le.Tensor: "le", aten.le.Scalar: "le",
    aten.gt.Tensor: "gt", aten.gt.Scalar: "gt", aten.ge.Tensor: "ge", aten.ge.Scalar: "ge",
}


def common_dtype(x: Any, y: Any) -> torch.dtype:
    return torch.result_type(val(x), val(y))


def comparison(b: Builder, node: torch.fx.Node) -> str:
    x, y = node.args[0], node.args[1]
    dtype = common_dtype(x, y)
    return b.emit(COMPARISON[node.target], [b.cast(x, dtype), b.cast(y, dtype)])


for _t in COMPARISON:
    HANDLERS[_t] = comparison


BITWISE = (aten.bitwise_and.Tensor, aten.bitwise_or.Tensor, aten.bitwise_and.Scalar, aten.bitwise_or.Scalar,
           aten.bitwise_xor.Tensor, aten.bitwise_xor.Scalar)


def truth(b: Builder, x: torch.fx.Node) -> str:
    """A tensor as bools: itself if bool, else x != 0."""
    return b.value(x) if val(x).dtype == torch.bool else b.emit("ne", [b.value(x), literal(0, val(x).dtype)])


@handles(aten.logical_and.default, aten.logical_or.default, aten.logical_xor.default, *BITWISE)
def logical(b: Builder, node: torch.fx.Node) -> str:
    """and, or, xor of truth values (bitwise ops on bools are these); a
    Python bool operand is folded away (x & True is x, x | True is all true)."""
    if node.target in BITWISE and out(node).dtype != torch.bool:
        raise Unsupported("bitwise ops on integers")
    name = str(node.target).split(".")[1]
    op = "ne" if "xor" in name else "logical_and" if "and" in name else "logical_or"
    x, y = node.args[0], node.args[1]
    if not isinstance(x, torch.fx.Node):
        x, y = y, x
    if isinstance(y, torch.fx.Node):
        return b.emit(op, [truth(b, x), truth(b, y)])
    if op == "ne":
        return b.emit("logical_not", [truth(b, x)]) if y else truth(b, x)
    if (op == "logical_and") == bool(y):  # x & True, x | False
        return truth(b, x)
    return b.emit("full", [], {"value": bool(y)}, type=type_text(out(node)))


@handles(aten.where.self)
def where(b: Builder, node: torch.fx.Node) -> str:
    c, x, y = node.args
    dtype = out(node).dtype
    return b.emit("where", [b.cast(c, torch.bool), b.cast(x, dtype), b.cast(y, dtype)])


def clamp_bound(value: Any, dtype: torch.dtype) -> Any:
    """A clamp bound in the result's dtype: torch promotes an integer tensor
    clamped by float bounds to float (and the input is cast to it)."""
    if value is None:
        return None
    if isinstance(value, torch.fx.Node):
        raise Unsupported("a clamp bound that is a tensor")
    return float(value) if dtype.is_floating_point else int(value)


@handles(aten.clamp.default)
def clamp(b: Builder, node: torch.fx.Node) -> str:
    dtype = out(node).dtype
    lo, hi = clamp_bound(arg(node, 1, "min"), dtype), clamp_bound(arg(node, 2, "max"), dtype)
    return b.emit("clamp", [b.cast(node.args[0], dtype)], {"min": lo, "max": hi})


@handles(aten.clamp_min.default, aten.clamp_max.default)
def clamp_one(b: Builder, node: torch.fx.Node) -> str:
    dtype = out(node).dtype
    bound = "min" if node.target is aten.clamp_min.default else "max"
    return b.emit("clamp", [b.cast(node.args[0], dtype)], {bound: clamp_bound(node.args[1], dtype)})


@handles(aten._to_copy.default)
def to_copy(b: Builder, node: torch.fx.Node) -> str:
    if node.kwargs.get("device") not in (None, torch.device("cpu")) and val(node.args[0]).device != out(node).device:
        raise Unsupported("a copy to another device")
    return b.cast(node.args[0], out(node).dtype)


@handles(torch.ops.prims.copy_strided.default)
def copy_strided(b: Builder, node: torch.fx.Node) -> str:
    return b.value(node.args[0])  # a copy with other strides: graphc's values have none


@handles(torch.ops.prims.fma.default)
def fma(b: Builder, node: torch.fx.Node) -> str:
    """a * b + c (torch's addcmul decomposes to it): a multiply and an add,
    which fusion puts in one kernel."""
    dtype = out(node).dtype
    a, x, c = (b.cast(v, dtype) for v in node.args[:3])
    return b.emit("add", [b.emit("mul", [a, x]), c])


@handles(torch.ops.prims.convert_element_type.default)
def convert_element_type(b: Builder, node: torch.fx.Node) -> str:
    return b.cast(node.args[0], out(node).dtype)


@handles(aten.copy.default)
def copy(b: Builder, node: torch.fx.Node) -> str:
    """The functional form of ``dst.copy_(src)`` (what an in-place
    activation decomposes to): src, in dst's dtype and shape."""
    dst, src = node.args[0], node.args[1]
    v = b.cast(src, out(node).dtype)
    if tuple(val(src).shape) != tuple(out(node).shape):
        v = b.emit("expand", [v], {"shape": shape_attr(node)})
    return v


@handles(aten.copy_.default)
def copy_into_input(b: Builder, node: torch.fx.Node) -> str:
    """``dst.copy_(src)`` where dst is a graph input: how AOTAutograd leaves
    a mutated input in the graph (keep_inference_input_mutations, the last
    statements). The value is a result that updates dst's parameter in
    place: graphc writes it into the caller's tensor, where nothing reads
    it afterwards straight from the kernel that computes it (a buffer's
    running statistics, a KV cache's row). The partitioner only lets a
    copy_ in whose dst nothing reads after it (partition.py)."""
    dst = node.args[0]
    if not (isinstance(dst, torch.fx.Node) and dst.op == "placeholder"):
        raise Unsupported("a copy_ into a tensor that is not a graph input")
    if any(v is dst for _, v in b.updates):
        raise Unsupported("a second copy_ into the same graph input")
    value = copy(b, node)
    b.updates.append((value, dst))
    return value


@handles(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default, aten.detach.default)
def identity(b: Builder, node: torch.fx.Node) -> str:
    return b.value(node.args[0])


# --- reductions and normalisation -----------------------------------------------


def reduce_dims(node: torch.fx.Node) -> Optional[List[int]]:
    dims = arg(node, 1, "dim")
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return None
    return list(dims) if isinstance(dims, (list, tuple)) else [dims]


@handles(aten.sum.dim_IntList, aten.mean.dim, aten.amax.default, aten.amin.default, aten.sum.default,
         aten.mean.default, aten.max.default, aten.min.default)
def reduction(b: Builder, node: torch.fx.Node) -> str:
    """Sums, means and extremes; max() and min() of a whole tensor are its
    amax and amin (NaN propagates in both, as in torch)."""
    op = {aten.sum.dim_IntList: "sum", aten.sum.default: "sum", aten.mean.dim: "mean",
          aten.mean.default: "mean", aten.amax.default: "amax", aten.amin.default: "amin",
          aten.max.default: "amax", aten.min.default: "amin"}[node.target]
    dtype = out(node).dtype
    if op == "sum" and dtype != torch.int64 and not dtype.is_floating_point:
        raise Unsupported(f"sum to {dtype}")  # graphc sums integers to i64, as torch does by default
    x = node.args[0]
    xs = b.value(x)
    if op in ("sum", "mean") and val(x).dtype != dtype:
        xs = b.cast(x, dtype)
    if node.target in (aten.sum.default, aten.mean.default):
        return b.emit(op, [xs])
    return b.emit(op, [xs], {"dims": reduce_dims(node), "keepdim": bool(arg(node, 2, "keepdim", False))})


@handles(aten.prod.default, aten.prod.dim_int)
def prod(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    dtype = out(node).dtype
    if dtype == torch.bool or (not dtype.is_floating_point and dtype != torch.int64):
        raise Unsupported(f"prod to {dtype}")  # graphc multiplies integers in i64, as torch does by default
    xs = b.cast(x, dtype)
    if node.target is aten.prod.default:
        return b.emit("prod", [xs])
    return b.emit("prod", [xs], {"dims": [node.args[1]], "keepdim": bool(arg(node, 2, "keepdim", False))})


def reduced_count(b: Builder, x: Any, dims: List[int], dtype: torch.dtype, less: int = 0) -> str:
    """How many elements each reduction over `dims` of x takes, less `less`,
    as a scalar of dtype: a literal for static sizes, else a sum of ones
    (the sizes are symbols graphc binds at run time)."""
    shape = val(x).shape
    sizes = [shape[norm_dim(d, len(shape))] for d in dims]
    if all(isinstance(s, int) for s in sizes):
        count = 1
        for s in sizes:
            count *= s
        return literal(count - less, dtype)
    ones = b.emit("full", [], {"value": 1.0}, type=f"{dtype_name(dtype)}[{', '.join(dim_text(s) for s in sizes)}]")
    total = b.emit("sum", [ones])
    return b.emit("sub", [total, literal(less, dtype)]) if less else total


@handles(aten.var.correction, aten.var.dim, aten.var.default)
def var(b: Builder, node: torch.fx.Node) -> str:
    """sum((x - mean)²) / (N - correction) over dims (all when none)."""
    x = node.args[0]
    dtype = out(node).dtype
    if not dtype.is_floating_point:
        raise Unsupported(f"var of {dtype}")
    if node.target is aten.var.default:
        dims, keepdim = None, False
    else:
        dims = reduce_dims(node)
        keepdim = bool(arg(node, 3, "keepdim", False) if node.target is aten.var.dim
                       else node.kwargs.get("keepdim", False))
    if node.target is aten.var.correction:
        correction = node.kwargs.get("correction")
        correction = 1 if correction is None else correction
    else:
        unbiased = arg(node, 2 if node.target is aten.var.dim else 1, "unbiased", True)
        unbiased = True if unbiased is None else unbiased
        correction = 1 if unbiased else 0
    return variance(b, x, dtype, dims, keepdim, correction)[0]


def variance(b: Builder, x: Any, dtype: torch.dtype, dims: Optional[List[int]], keepdim: bool,
             correction: float) -> tuple:
    """(var, mean) of x over dims (all when None)."""
    every = dims if dims is not None else list(range(rank(x)))
    xs = b.cast(x, dtype)
    mean = b.emit("mean", [xs], {"dims": every, "keepdim": True})
    centered = b.emit("sub", [xs, mean])
    total = b.emit("sum", [b.emit("mul", [centered, centered])], {"dims": every, "keepdim": keepdim})
    if not keepdim:
        mean = b.emit("mean", [xs], {"dims": every, "keepdim": False})
    return b.emit("div", [total, reduced_count(b, x, every, dtype, less=correction)]), mean


@handles(aten.var_mean.correction)
def var_mean(b: Builder, node: torch.fx.Node) -> tuple:
    x = node.args[0]
    dtype = val(node)[0].dtype
    if not dtype.is_floating_point:
        raise Unsupported(f"var_mean of {dtype}")
    correction = node.kwargs.get("correction")
    return variance(b, x, dtype, reduce_dims(node), bool(node.kwargs.get("keepdim", False)),
                    1 if correction is None else correction)


@handles(aten.max.dim, aten.min.dim)
def extremum_and_index(b: Builder, node: torch.fx.Node) -> tuple:
    """torch.max(x, dim): the values (amax) and the index of the first
    extreme (argmax)."""
    x, dim = node.args[0], node.args[1]
    keepdim = bool(arg(node, 2, "keepdim", False))
    is_max = node.target is aten.max.dim
    values = b.emit("amax" if is_max else "amin", [b.value(x)], {"dims": [dim], "keepdim": keepdim})
    indices = b.emit("argmax" if is_max else "argmin", [b.value(x)], {"dim": dim, "keepdim": keepdim})
    return (values, indices)


@handles(aten.any.dim, aten.any.dims, aten.any.default)
def any_(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    counts = b.emit("cast", [b.value(x)], {"dtype": Raw("i32")})
    if node.target is aten.any.default:
        total = b.emit("sum", [counts])
    else:
        total = b.emit("sum", [counts], {"dims": reduce_dims(node), "keepdim": bool(arg(node, 2, "keepdim", False))})
    return b.emit("ne", [total, "0"])


@handles(aten.argmax.default, aten.argmin.default)
def arg_extremum(b: Builder, node: torch.fx.Node) -> str:
    d = arg(node, 1, "dim")
    if d is None:
        raise Unsupported("argmax over every dim")
    op = "argmax" if node.target is aten.argmax.default else "argmin"
    return b.emit(op, [b.value(node.args[0])], {"dim": d, "keepdim": bool(arg(node, 2, "keepdim", False))})


@handles(aten.cumsum.default)
def cumsum(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    # The dtype= given (the input is cast to it first, as torch does), or
    # torch's: floats keep theirs, integers and bools sum in i64.
    dtype = out(node).dtype
    xs = b.cast(x, dtype) if val(x).dtype.is_floating_point or dtype.is_floating_point else b.value(x)
    summed = b.emit("cumsum", [xs], {"dim": node.args[1]})
    return summed if dtype.is_floating_point else b.cast_to(summed, torch.int64, dtype)


@handles(aten._softmax.default, aten._log_softmax.default)
def softmax(b: Builder, node: torch.fx.Node) -> str:
    x, dim = node.args[0], node.args[1]
    op = "softmax" if node.target is aten._softmax.default else "log_softmax"
    return b.emit(op, [b.cast(x, out(node).dtype)], {"dim": dim})


def ones_like_param(b: Builder, shape: List[Any], value: float, dtype: torch.dtype) -> str:
    return b.emit("full", [], {"value": _scalar_attr(value, dtype)},
                  type=f"{dtype_name(dtype)}[{', '.join(dim_text(s) for s in shape)}]")


def compute_dtype(x: Any, *params: Any) -> torch.dtype:
    """The dtype a normalisation computes in: its input's, or its affine
    parameters' where they differ (autocast's bf16 input with the f32
    weights of the module: ATen's CPU kernels compute in the parameters'
    f32, return the output in the input's dtype and the statistics in
    f32)."""
    for p in params:
        if p is not None and val(p).dtype != val(x).dtype:
            return val(p).dtype
    return val(x).dtype


@handles(aten.native_layer_norm.default)
def layer_norm(b: Builder, node: torch.fx.Node) -> tuple:
    x, normalized, w, bias, eps = node.args
    dtype = compute_dtype(x, w, bias)
    xs = b.cast(x, dtype)
    ws = b.value(w) if w is not None else ones_like_param(b, list(normalized), 1.0, dtype)
    operands = [xs, ws] + ([b.value(bias)] if bias is not None else [])
    y = b.cast_to(b.emit("layer_norm", operands, {"eps": float(eps)}), dtype, val(node)[0].dtype)
    if not statistics_read(node, dtype):
        return (y, None, None)
    r = rank(x)
    return (y, *statistics(b, xs, list(range(r - len(normalized), r)), eps, dtype))


@handles(aten.native_group_norm.default)
def group_norm(b: Builder, node: torch.fx.Node) -> tuple:
    x, w, bias, _n, c, _hw, groups, eps = node.args
    dtype = compute_dtype(x, w, bias)
    xs = b.cast(x, dtype)
    ws = b.value(w) if w is not None else ones_like_param(b, [c], 1.0, dtype)
    bs = b.value(bias) if bias is not None else ones_like_param(b, [c], 0.0, dtype)
    y = b.cast_to(b.emit("group_norm", [xs, ws, bs], {"groups": groups, "eps": float(eps)}), dtype,
                  val(node)[0].dtype)
    if not statistics_read(node, dtype):
        return (y, None, None)
    # [N, G]: over each group's channels and positions, as ATen's.
    grouped = b.emit("reshape", [xs], {"shape": [Dim(dim_text(val(x).shape[0])), groups, Raw("-1")]})
    mean, rstd = statistics(b, grouped, [2], eps, dtype)
    shape = {"shape": [Dim(dim_text(s)) for s in val(node)[1].shape]}
    return (y, b.emit("reshape", [mean], shape), b.emit("reshape", [rstd], shape))


def statistics_read(node: torch.fx.Node, dtype: torch.dtype) -> bool:
    """Whether a normalisation's mean or rstd output is read (a training
    graph saves them for the backward; inference drops them), in `dtype`,
    the dtype it computes in. (A training graph decomposes the
    normalisations whose statistics are in another dtype:
    training.mixed_dtype_normalisation.)"""
    read = any(u.target is operator.getitem and u.args[1] in (1, 2) and u.users for u in node.users)
    if read and val(node)[1].dtype != dtype:
        raise Unsupported(f"the statistics of a normalisation computed in {dtype} as {val(node)[1].dtype}")
    return read


def statistics(b: Builder, x: str, dims: List[int], eps: float, dtype: torch.dtype) -> Tuple[str, str]:
    """The mean and 1/sqrt(biased variance + eps) of `x` over `dims`, kept
    as dims of size 1: a normalisation's saved statistics."""
    mean = b.emit("mean", [x], {"dims": dims, "keepdim": True})
    centred = b.emit("sub", [x, mean])
    variance = b.emit("mean", [b.emit("mul", [centred, centred])], {"dims": dims, "keepdim": True})
    return mean, b.emit("rsqrt", [b.emit("add", [variance, literal(eps, dtype)])])


@handles(aten._native_batch_norm_legit_no_training.default)
def batch_norm(b: Builder, node: torch.fx.Node) -> tuple:
    x, w, bias, mean, var, _momentum, eps = node.args
    c = val(x).shape[1]
    dtype = compute_dtype(x, mean, var, w, bias)
    ws = b.value(w) if w is not None else ones_like_param(b, [c], 1.0, dtype)
    bs = b.value(bias) if bias is not None else ones_like_param(b, [c], 0.0, dtype)
    y = b.emit("batch_norm", [b.cast(x, dtype), b.cast(mean, dtype), b.cast(var, dtype), ws, bs],
               {"eps": float(eps)})
    return (b.cast_to(y, dtype, val(node)[0].dtype), None, None)


# --- convolution, pooling, linear algebra -------------------------------------------


def spatial(values: Any, n: int) -> List[int]:
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    return values * n if len(values) == 1 else values


@handles(aten.convolution.default)
def convolution(b: Builder, node: torch.fx.Node) -> str:
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = node.args
    n = rank(x) - 2
    pads = spatial(padding, n)
    attrs: Dict[str, Any] = {"stride": spatial(stride, n), "padding": pads + pads, "dilation": spatial(dilation, n),
                             "groups": groups}
    operands = [b.value(x), b.value(w)] + ([b.value(bias)] if bias is not None else [])
    if transposed:
        attrs["output_padding"] = spatial(output_padding, n)
        return b.emit("conv_transpose", operands, attrs)
    return b.emit("conv", operands, attrs)


@handles(aten.max_pool2d_with_indices.default, aten.max_pool2d.default, aten.max_pool3d_with_indices.default,
         aten.max_pool1d.default)
def max_pool(b: Builder, node: torch.fx.Node) -> Any:
    x, kernel = node.args[0], node.args[1]
    n = rank(x) - 2
    stride = arg(node, 2, "stride", []) or kernel
    padding, dilation = arg(node, 3, "padding", 0), arg(node, 4, "dilation", 1)
    pads = spatial(padding, n)
    y = b.emit("max_pool", [b.value(x)], {"kernel": spatial(kernel, n), "stride": spatial(stride, n),
                                          "padding": pads + pads, "dilation": spatial(dilation, n),
                                          "ceil_mode": bool(arg(node, 5, "ceil_mode", False))})
    with_indices = node.target in (aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default)
    return (y, None) if with_indices else y


@handles(aten.avg_pool2d.default, aten.avg_pool3d.default, aten.avg_pool1d.default)
def avg_pool(b: Builder, node: torch.fx.Node) -> str:
    x, kernel = node.args[0], node.args[1]
    n = rank(x) - 2
    stride = arg(node, 2, "stride", []) or kernel
    pads = spatial(arg(node, 3, "padding", 0), n)
    if arg(node, 6, "divisor_override") is not None:
        raise Unsupported("avg_pool with divisor_override")
    return b.emit("avg_pool", [b.value(x)], {"kernel": spatial(kernel, n), "stride": spatial(stride, n),
                                             "padding": pads + pads,
                                             "ceil_mode": bool(arg(node, 4, "ceil_mode", False)),
                                             "count_include_pad": bool(arg(node, 5, "count_include_pad", True))})


def adaptive_windows(size: int, out_size: int) -> List[Tuple[int, int]]:
    """torch's adaptive pooling windows: [floor(k·in/out), ceil((k+1)·in/out))."""
    return [((k * size) // out_size, -((-(k + 1) * size) // out_size)) for k in range(out_size)]


@handles(aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default, aten.adaptive_avg_pool1d.default)
def adaptive_avg_pool(b: Builder, node: torch.fx.Node) -> str:
    """A mean when the output is 1 everywhere, an avg_pool when each size
    divides evenly, else the separable average: one constant averaging
    matrix per spatial dim, applied by a matmul along it."""
    x, out_sizes = node.args[0], list(node.args[1])
    n, r = len(out_sizes), rank(x)
    dims = list(range(r - n, r))
    if all(o == 1 for o in out_sizes):
        return b.emit("mean", [b.value(x)], {"dims": dims, "keepdim": True})
    sizes = []
    for d in dims:
        s = static_size(x, d)
        if s is None:
            raise Unsupported("adaptive pooling over a symbolic size")
        sizes.append(s)
    if all(s % o == 0 for s, o in zip(sizes, out_sizes)):
        kernel = [s // o for s, o in zip(sizes, out_sizes)]
        return b.emit("avg_pool", [b.value(x)], {"kernel": kernel, "stride": kernel, "padding": [0] * (2 * n)})
    dtype = out(node).dtype
    v = b.value(x)
    for d, s, o in zip(dims, sizes, out_sizes):
        weights = [[0.0] * o for _ in range(s)]  # [in, out]: x (…, in) @ weights
        for k, (lo, hi) in enumerate(adaptive_windows(s, o)):
            for i in range(lo, hi):
                weights[i][k] = 1.0 / (hi - lo)
        matrix = b.emit("constant", [], {"value": Raw(repr(weights))}, type=f"{dtype_name(dtype)}[{s}, {o}]")
        if d != r - 1:
            v = b.emit("transpose", [v], {"dim0": d, "dim1": r - 1})
        v = b.emit("matmul", [v, matrix])
        if d != r - 1:
            v = b.emit("transpose", [v], {"dim0": d, "dim1": r - 1})
    return v


@handles(aten.mm.default, aten.bmm.default)
def matmul(b: Builder, node: torch.fx.Node) -> str:
    return b.emit("matmul", [b.value(node.args[0]), b.value(node.args[1])])


@handles(aten.addmm.default)
def addmm(b: Builder, node: torch.fx.Node) -> str:
    bias, x, w = node.args[:3]
    if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
        raise Unsupported("addmm with beta or alpha != 1")
    return b.emit("add", [b.emit("matmul", [b.value(x), b.value(w)]), b.value(bias)])


# --- shape ---------------------------------------------------------------------------


@handles(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def reshape(b: Builder, node: torch.fx.Node) -> str:
    return b.emit("reshape", [b.value(node.args[0])], {"shape": shape_attr(node)})


@handles(aten.expand.default)
def expand(b: Builder, node: torch.fx.Node) -> str:
    return b.emit("expand", [b.value(node.args[0])], {"shape": shape_attr(node)})


@handles(aten.permute.default)
def permute(b: Builder, node: torch.fx.Node) -> str:
    return b.emit("permute", [b.value(node.args[0])], {"dims": list(node.args[1])})


@handles(aten.t.default, aten.transpose.int)
def transpose(b: Builder, node: torch.fx.Node) -> str:
    if rank(node.args[0]) < 2:
        return b.value(node.args[0])
    d0, d1 = (0, 1) if node.target is aten.t.default else (node.args[1], node.args[2])
    return b.emit("transpose", [b.value(node.args[0])], {"dim0": d0, "dim1": d1})


@handles(aten.unsqueeze.default)
def unsqueeze(b: Builder, node: torch.fx.Node) -> str:
    return b.emit("unsqueeze", [b.value(node.args[0])], {"dim": node.args[1]})


@handles(aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
def squeeze(b: Builder, node: torch.fx.Node) -> str:
    # Only dims of size 1 go (torch leaves others); the output's rank says.
    x = node.args[0]
    return b.emit("reshape", [b.value(x)], {"shape": shape_attr(node)})


def static_size(x: Any, dim: int) -> Optional[int]:
    s = val(x).shape[dim]
    return s if isinstance(s, int) else None


def slice_of(b: Builder, x: Any, dim: int, start: int, end: Optional[int], step: int, taken: Any = None) -> str:
    """x[start:end:step] along dim; `taken`, the result's size there."""
    size = static_size(x, dim)
    if size is None and isinstance(taken, int) and start >= 0 and step > 0:
        # A static piece of a symbolic dim (x[:, :1] with a dynamic length,
        # which torch guarded to be long enough): the rows by index, since
        # graphc's slice of a symbolic dim takes all of it.
        rows = b.emit("iota", [], {"dim": 0, "start": start, "step": step}, type=f"i64[{taken}]")
        return b.emit("index_select", [b.value(x), rows], {"dim": dim})
    if end is not None and size is not None and end >= size:
        end = None
    if end is not None and end >= 2**62:
        end = None
    return b.emit("slice", [b.value(x)], {"dim": dim, "start": start, "end": end, "step": step})


@handles(aten.slice.Tensor)
def slice_(b: Builder, node: torch.fx.Node) -> str:
    x = node.args[0]
    dim = norm_dim(arg(node, 1, "dim", 0), rank(x))
    start, end, step = arg(node, 2, "start", 0) or 0, arg(node, 3, "end"), arg(node, 4, "step", 1)
    start, end, step = val(start), val(end), val(step)
    taken = out(node).shape[dim]
    if isinstance(start, int) and isinstance(step, int) and (end is None or isinstance(end, int)):
        return slice_of(b, x, dim, start, end, step, taken)
    if not isinstance(step, int) or step <= 0:
        raise Unsupported("a slice with a symbolic or negative step")
    if isinstance(start, int) and start < 0:
        raise Unsupported("a slice from a negative start to a symbolic end")
    # A symbolic bound (position ids [:, :s1], a cache's window [s0:s1]):
    # the rows by index, as many as the result's size, which torch computed
    # (and guarded) exactly, from the start's value (a sum of ones when it
    # is a size).
    rows = b.emit("iota", [], {"dim": 0, "start": 0, "step": step}, type=f"i64[{dim_text(taken)}]")
    if isinstance(start, int):
        if start:
            rows = b.emit("add", [rows, str(start)])
    else:
        ones = b.emit("full", [], {"value": 1}, type=f"i64[{dim_text(start)}]")
        rows = b.emit("add", [rows, b.emit("sum", [ones])])
    return b.emit("index_select", [b.value(x), rows], {"dim": dim})


@handles(aten.select.int)
def select(b: Builder, node: torch.fx.Node) -> str:
    x, dim, index = node.args
    if not isinstance(index, int):
        raise Unsupported("select at a symbolic index")
    dim = norm_dim(dim, rank(x))
    if index >= 0:
        s = slice_of(b, x, dim, index, index + 1, 1, 1)
    else:
        s = b.emit("slice", [b.value(x)], {"dim": dim, "start": index, "end": None if index == -1 else index + 1})
    return b.emit("squeeze", [s], {"dim": dim})


@handles(aten.split_with_sizes.default, aten.split.Tensor)
def split(b: Builder, node: torch.fx.Node) -> tuple:
    x = node.args[0]
    dim = norm_dim(arg(node, 2, "dim", 0), rank(x))
    pieces, start = [], 0
    for piece in val(node):
        length = piece.shape[dim]
        if not isinstance(length, int):
            raise Unsupported("a split into symbolic sizes")
        pieces.append(slice_of(b, x, dim, start, start + length, 1))
        start += length
    return tuple(pieces)


@handles(aten.cat.default)
def cat(b: Builder, node: torch.fx.Node) -> str:
    # torch.cat skips 1-D empty tensors (its legacy rule); a symbolic size
    # is not asked about, which would pin it.
    tensors = [t for t in node.args[0] if not (val(t).dim() == 1 and statically_known_true(val(t).shape[0] == 0))]
    dtype = out(node).dtype
    dim = norm_dim(arg(node, 1, "dim", 0), rank(node))
    return b.emit("concat", [b.cast(t, dtype) for t in tensors], {"dim": dim})


# --- indexing ----------------------------------------------------------------------------


def check_indices(b: Builder, node: torch.fx.Node, index: Any, size: Any, negative_ok: bool) -> None:
    """A bounds check of an index tensor against a dim of `size`, returned as
    a flag the partition tests after its run: eager PyTorch raises
    IndexError for an index outside [0, size) (or [-size, size) where
    negatives count from the end), where graphc's kernels clamp it."""
    if not isinstance(index, torch.fx.Node) or val(index).dtype == torch.bool:
        return
    dtype = val(index).dtype
    v = b.value(index)
    if isinstance(size, int):
        hi, lo = literal(size, dtype), literal(-size if negative_ok else 0, dtype)
    else:
        ones = b.emit("full", [], {"value": 1}, type=f"{dtype_name(dtype)}[{dim_text(size)}]")
        hi = b.cast_to(b.emit("sum", [ones]), torch.int64, dtype)
        lo = b.emit("neg", [hi]) if negative_ok else literal(0, dtype)
    outside = b.emit("logical_or", [b.emit("ge", [v, hi]), b.emit("lt", [v, lo])])
    count = b.emit("sum", [b.emit("cast", [outside], {"dtype": Raw("i32")})])
    b.checks.append((b.emit("ne", [count, "0"]), f"{node.target} ({node.name})"))


@handles(aten.embedding.default)
def embedding(b: Builder, node: torch.fx.Node) -> str:
    weight, indices = node.args[0], node.args[1]
    check_indices(b, node, indices, val(weight).shape[0], negative_ok=False)
    return b.emit("index_select", [b.value(weight), b.value(indices)], {"dim": 0})


@handles(aten.as_strided.default, aten.as_strided_.default)
def as_strided(b: Builder, node: torch.fx.Node) -> str:
    """Only the view that is a reshape: static sizes, contiguous strides,
    offset 0, over an input whose storage is laid out as its values are
    (as_strided reads the storage; graphc's values are dense) — and for
    the in-place form, a tensor nothing else reads."""
    x, size, stride = node.args[:3]
    if node.target is aten.as_strided_.default and len(x.users) != 1:
        raise Unsupported("as_strided_ of a tensor read elsewhere")
    if not all(isinstance(v, int) for v in list(size) + list(stride) + list(val(x).shape)):
        raise Unsupported("as_strided with symbolic sizes")
    if arg(node, 3, "storage_offset", 0) not in (0, None) or not val(x).is_contiguous() or \
            val(x).numel() != out(node).numel():
        raise Unsupported("as_strided that is not a reshape")
    expected = 1
    for sz, st in reversed(list(zip(size, stride))):
        if sz != 1 and st != expected:
            raise Unsupported("as_strided that is not a reshape")
        expected *= sz
    return b.emit("reshape", [b.value(x)], {"shape": shape_attr(node)})


def resize_scales_agree(node: torch.fx.Node, scales: Any) -> None:
    """torch maps an output index to an input coordinate by 1/scale when the
    call gave scale factors, by in/out otherwise; graphc's resize uses
    in/out, so a scale factor must give the same ratio."""
    if not scales:
        return
    x = node.args[0]
    for d, scale in enumerate(scales):
        size_in, size_out = val(x).shape[2 + d], out(node).shape[2 + d]
        if scale is None:
            continue
        if not isinstance(size_in, int) or not isinstance(size_out, int):
            raise Unsupported("resizing a symbolic size by a scale factor")
        if float(torch.tensor(1.0 / scale, dtype=torch.float32)) != float(torch.tensor(size_in / size_out,
                                                                                      dtype=torch.float32)):
            raise Unsupported(f"a scale factor {scale} that is not the ratio of the sizes {size_out}/{size_in}")


def resize_scales(node: torch.fx.Node, spatial_dims: int) -> Any:
    if node.target in (aten.upsample_nearest2d.vec, aten.upsample_bilinear2d.vec):
        return arg(node, 3 if node.target is aten.upsample_bilinear2d.vec else 2, "scale_factors")
    first = 3 if node.target is aten.upsample_bilinear2d.default else 2
    return [arg(node, first + k, ["scales_h", "scales_w"][k]) for k in range(spatial_dims)]


@handles(aten.upsample_nearest2d.default, aten.upsample_nearest2d.vec)
def upsample_nearest(b: Builder, node: torch.fx.Node) -> str:
    # torch's nearest: source index floor(dst * in / out), ONNX's asymmetric + floor.
    resize_scales_agree(node, resize_scales(node, 2))
    return b.emit("resize", [b.value(node.args[0])], {"size": shape_attr(node), "mode": "nearest",
                                                      "coordinates": "asymmetric", "nearest": "floor"})


@handles(aten.upsample_bilinear2d.default, aten.upsample_bilinear2d.vec)
def upsample_bilinear(b: Builder, node: torch.fx.Node) -> str:
    """Bilinear: align_corners maps the corners onto each other; otherwise
    half-pixel centres, a coordinate below 0 clamped to 0 (torch's, which
    linear interpolation at the edge gives the same as)."""
    resize_scales_agree(node, resize_scales(node, 2))
    align = bool(arg(node, 2, "align_corners", False))
    return b.emit("resize", [b.value(node.args[0])], {"size": shape_attr(node), "mode": "linear",
                                                      "coordinates": "align_corners" if align else "half_pixel"})


@handles(aten.index_select.default)
def index_select(b: Builder, node: torch.fx.Node) -> str:
    x, dim, i = node.args
    check_indices(b, node, i, val(x).shape[norm_dim(dim, rank(x))], negative_ok=False)
    return b.emit("index_select", [b.value(x), b.value(i)], {"dim": dim})


@handles(aten.gather.default)
def gather(b: Builder, node: torch.fx.Node) -> str:
    x, dim, i = node.args[:3]
    check_indices(b, node, i, val(x).shape[norm_dim(dim, rank(x))], negative_ok=False)
    return b.emit("gather", [b.value(x), b.value(i)], {"dim": dim})


# --- creation --------------------------------------------------------------------------


@handles(aten.full.default, aten.full_like.default, aten.scalar_tensor.default, aten.zeros.default,
         aten.ones.default, aten.zeros_like.default, aten.ones_like.default)
def full(b: Builder, node: torch.fx.Node) -> str:
    if node.target in (aten.full.default, aten.full_like.default):
        value = node.args[1]
    elif node.target is aten.scalar_tensor.default:
        value = node.args[0]
    else:
        value = 1 if node.target in (aten.ones.default, aten.ones_like.default) else 0
    o = out(node)
    return b.emit("full", [], {"value": _scalar_attr(value, o.dtype)}, type=type_text(o))


@handles(aten.empty.memory_format, aten.empty_strided.default, aten.empty_permuted.default, aten.new_empty.default,
         aten.empty_like.default)
def empty(b: Builder, node: torch.fx.Node) -> str:
    """Memory torch leaves uninitialised: zeros (any values are as valid)."""
    o = out(node)
    return b.emit("full", [], {"value": _scalar_attr(0, o.dtype)}, type=type_text(o))


@handles(aten.native_dropout.default)
def native_dropout(b: Builder, node: torch.fx.Node) -> tuple:
    """Dropout that drops nothing (p = 0 or not training): the input, and a
    mask of ones. In training it draws random numbers from PyTorch's
    generator, which graphc does not reproduce."""
    x, p, train = node.args[0], node.args[1], arg(node, 2, "train", True)
    if train and p != 0:
        raise Unsupported("dropout in training draws random numbers from PyTorch's generator")
    mask = b.emit("full", [], {"value": True}, type=type_text(val(node)[1]))
    return (b.value(x), mask)


def _scalar_attr(value: Any, dtype: torch.dtype) -> Any:
    if dtype == torch.bool:
        return bool(value)
    return float(value) if dtype.is_floating_point else int(value)


@handles(aten.arange.start_step, aten.arange.default, aten.arange.start)
def arange(b: Builder, node: torch.fx.Node) -> str:
    if node.target is aten.arange.default:
        start, step = 0, 1
    else:
        start, step = val(node.args[0]), val(arg(node, 2, "step", 1))
    if not isinstance(step, (int, float)):
        raise Unsupported("arange with a symbolic step")
    o = out(node)
    if isinstance(start, (int, float)):
        return b.emit("iota", [], {"dim": 0, "start": _scalar_attr(start, o.dtype),
                                   "step": _scalar_attr(step, o.dtype)}, type=type_text(o))
    # From a symbolic start (positions past a cache's length): its value is
    # a sum of as many ones, graphc's way from a size to data.
    if o.dtype.is_floating_point:
        raise Unsupported("a float arange from a symbolic start")
    ones = b.emit("full", [], {"value": 1}, type=f"{dtype_name(o.dtype)}[{dim_text(start)}]")
    offset = b.cast_to(b.emit("sum", [ones]), torch.int64, o.dtype)
    steps = b.emit("iota", [], {"dim": 0, "start": 0, "step": _scalar_attr(step, o.dtype)}, type=type_text(o))
    return b.emit("add", [steps, offset])


# --- control flow ------------------------------------------------------------------------


def translate_cond(b: Builder, node: torch.fx.Node) -> tuple:
    from graphc.dynamo.translate import translate_nodes

    pred, true_gm, false_gm, operands = node.args
    if not isinstance(val(pred), torch.Tensor) or val(pred).dtype != torch.bool or val(pred).dim() != 0:
        raise Unsupported("cond on a predicate that is not a bool tensor[]")
    tensors = [o for o in operands if isinstance(val(o), torch.Tensor)]
    regions = []
    for label, branch in (("then", true_gm), ("else", false_gm)):
        gm = getattr(branch.graph.owning_module, branch.target) if isinstance(branch, torch.fx.Node) else branch
        inner = Builder(b.name, indent=b.indent + "  ")
        inner.counter = b.counter
        returned = translate_nodes(inner, list(gm.graph.nodes), HANDLERS)
        if inner.checks:  # a region returns its branch's results only
            raise Unsupported("indexing that eager bounds-checks, inside a cond branch")
        b.counter = inner.counter
        body = "\n".join(inner.lines)
        regions.append(f"{label}({', '.join(inner.params)}) {{\n{body}\n{inner.indent}return {', '.join(returned)}\n"
                       f"{b.indent}}}")
    results = len(val(node))
    names = [b.fresh() for _ in range(results)]
    b.lines.append(f"{b.indent}{', '.join(names)} = cond({', '.join([b.value(pred)] + [b.value(t) for t in tensors])})"
                   f" {' '.join(regions)}")
    return tuple(names)


HANDLERS[torch.ops.higher_order.cond] = translate_cond

# The rest of the table: indexing writes, padding, reordering views.
from graphc.dynamo import aten_indexing  # noqa: E402,F401  (registers its handlers)
from graphc.dynamo import aten_experts  # noqa: E402,F401  (registers its handlers)
from graphc.dynamo import aten_linalg  # noqa: E402,F401  (registers its handlers)
