#!/usr/bin/python3
"""Writes the golden cases of tests/golden/cases with PyTorch (the model
suite's environment, tools/venv.sh, has it).

Each case is NAME.graph (one graph), NAME.inK.npy (its inputs) and
NAME.outK.npy (what PyTorch computes for it). GoldenTest runs every case on
the reference interpreter and compares with torch's default tolerances.

  $(tools/venv.sh)/bin/python tests/golden/make_goldens.py   # rewrites cases/

bf16 arrays are saved as 2-byte void ('|V2') holding the bf16 bit pattern,
the convention of runtime/Npy.h. f16/bf16 goldens are the op computed on
f32 copies of the inputs and rounded once (see opmath below).
"""
import math
import os
import shutil

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i8", "i32", "i64"]
ALL = FLOATS + INTS + ["bool"]
TORCH = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
         "i8": torch.int8, "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}
NAME_OF = {v: k for k, v in TORCH.items()}

rng = np.random.RandomState(1234)
cases = []


def tensor(dtype, shape, kind="normal"):
    """A deterministic input of a graphc dtype."""
    if dtype == "bool":
        return torch.from_numpy(rng.rand(*shape) > 0.5)
    if dtype in INTS:
        hi = 100 if dtype == "i8" else 20
        return torch.from_numpy(rng.randint(-hi, hi, size=shape)).to(TORCH[dtype])
    x = rng.randn(*shape)
    if kind == "positive":
        x = np.abs(x) + 0.1
    return torch.from_numpy(x).to(TORCH[dtype])


def type_text(t):
    return f"{NAME_OF[t.dtype]}[{', '.join(str(d) for d in t.shape)}]"


def save_npy(path, t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        np.save(path, t.view(torch.int16).numpy().view(np.dtype("V2")))
    else:
        np.save(path, t.numpy())


def add(name, body, inputs, fn, upcast=True):
    """body uses %i0, %i1, ... and returns its results via `return`."""
    outputs = (opmath(fn) if upcast else fn)(*inputs)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    params = ", ".join(f"%i{k}: {type_text(t)}" for k, t in enumerate(inputs))
    results = ", ".join(type_text(o) for o in outputs)
    text = f"// golden: {name}\ngraph @main({params}) -> ({results}) {{\n{body}\n}}\n"
    cases.append((name, text, inputs, outputs))


def opmath(fn):
    """Runs fn on f32 copies of f16/bf16 inputs and rounds float results back
    once: the "opmath" semantics of PyTorch's CUDA and current CPU kernels,
    and of graphc's reference (torch 1.13's CPU kernels sometimes round
    intermediates to bf16/f16, or lack those dtypes)."""
    def wrapped(*xs):
        low = [x.dtype for x in xs if x.dtype in (torch.float16, torch.bfloat16)]
        if not low:
            return fn(*xs)
        out = fn(*[x.float() if x.dtype in (torch.float16, torch.bfloat16) else x for x in xs])
        back = lambda o: o.to(low[0]) if o.is_floating_point() else o
        return [back(o) for o in out] if isinstance(out, (list, tuple)) else back(out)
    return wrapped


# ---- unary -------------------------------------------------------------------
unary_float = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "sin": torch.sin,
    "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "silu": torch.nn.functional.silu,
    "erf": torch.erf, "reciprocal": torch.reciprocal,
}
positive = {"log", "sqrt", "rsqrt", "reciprocal"}
for op, fn in unary_float.items():
    for dt in FLOATS:
        x = tensor(dt, (3, 5), "positive" if op in positive else "normal")
        add(f"{op}_{dt}", f"  %r = {op}(%i0)\n  return %r", [x], (fn))
for dt in FLOATS:
    x = tensor(dt, (3, 5))
    add(f"gelu_{dt}", "  %r = gelu(%i0)\n  return %r", [x], (torch.nn.functional.gelu))
    add(f"gelu_tanh_{dt}", "  %r = gelu(%i0) {approximate = \"tanh\"}\n  return %r", [x],
        (lambda t: torch.nn.functional.gelu(t, approximate="tanh")))
for op, fn in {"neg": torch.neg, "abs": torch.abs, "relu": torch.relu}.items():
    for dt in FLOATS + INTS:
        add(f"{op}_{dt}", f"  %r = {op}(%i0)\n  return %r", [tensor(dt, (4, 3))], (fn))
for dt in ALL:
    add(f"logical_not_{dt}", "  %r = logical_not(%i0)\n  return %r", [tensor(dt, (6,))], torch.logical_not)
for src, dst in [("f32", "f16"), ("f32", "bf16"), ("f32", "f64"), ("f32", "i32"), ("f64", "i64"), ("f32", "i8"),
                 ("i32", "f32"), ("i64", "f16"), ("bool", "f32"), ("f32", "bool"), ("i32", "i8"), ("f16", "bf16"),
                 ("i8", "i64"), ("bf16", "f32")]:
    x = tensor(src, (2, 5)) * (3 if src in FLOATS else 1) if src != "bool" else tensor(src, (2, 5))
    add(f"cast_{src}_to_{dst}", f"  %r = cast(%i0) {{dtype = {dst}}}\n  return %r", [x],
        lambda t, d=dst: t.to(TORCH[d]), upcast=False)

# ---- binary ------------------------------------------------------------------
binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "maximum": torch.maximum, "minimum": torch.minimum}
for op, fn in binary.items():
    for dt in FLOATS + INTS:
        add(f"{op}_{dt}", f"  %r = {op}(%i0, %i1)\n  return %r", [tensor(dt, (3, 4)), tensor(dt, (4,))],
            (fn))
for dt in FLOATS:
    add(f"div_{dt}", "  %r = div(%i0, %i1)\n  return %r", [tensor(dt, (3, 4)), tensor(dt, (3, 1), "positive")],
        torch.div)
    add(f"pow_{dt}", "  %r = pow(%i0, %i1)\n  return %r", [tensor(dt, (3, 4), "positive"), tensor(dt, (4,))],
        (torch.pow))
    add(f"mul_literal_{dt}", "  %r = mul(%i0, 0.5)\n  %s = add(%r, 2)\n  return %s", [tensor(dt, (5,))],
        lambda t: t * 0.5 + 2)
compare = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}
for op, fn in compare.items():
    for dt in ALL:
        a = tensor(dt, (4, 3))
        b = a.clone()
        b[::2] = tensor(dt, (2, 3))  # half equal, half random
        add(f"{op}_{dt}", f"  %r = {op}(%i0, %i1)\n  return %r", [a, b], fn)
for op, fn in {"logical_and": torch.logical_and, "logical_or": torch.logical_or}.items():
    for dt in ALL:
        add(f"{op}_{dt}", f"  %r = {op}(%i0, %i1)\n  return %r", [tensor(dt, (2, 3)), tensor(dt, (3,))], fn)
for dt in ALL:
    add(f"where_{dt}", "  %r = where(%i0, %i1, %i2)\n  return %r",
        [tensor("bool", (3, 4)), tensor(dt, (3, 4)), tensor(dt, (4,))], torch.where)
for dt in FLOATS:
    add(f"clamp_{dt}", "  %r = clamp(%i0) {min = -0.5, max = 0.75}\n  return %r", [tensor(dt, (3, 5))],
        lambda t: torch.clamp(t, -0.5, 0.75))
for dt in INTS:
    add(f"clamp_{dt}", "  %r = clamp(%i0) {min = -5}\n  return %r", [tensor(dt, (3, 5))],
        lambda t: torch.clamp(t, min=-5))

# ---- reductions and normalisation ----------------------------------------------
for op, fn in {"sum": torch.sum, "amax": torch.amax, "amin": torch.amin}.items():
    for dt in FLOATS + INTS:
        x = tensor(dt, (3, 4, 5))
        add(f"{op}_dims_{dt}", f"  %r = {op}(%i0) {{dims = [0, 2]}}\n  return %r", [x],
            (lambda t, f=fn: f(t, dim=(0, 2))))
        add(f"{op}_keepdim_{dt}", f"  %r = {op}(%i0) {{dims = [-1], keepdim = true}}\n  return %r", [x],
            (lambda t, f=fn: f(t, dim=-1, keepdim=True)))
    add(f"{op}_all_f32", f"  %r = {op}(%i0)\n  return %r", [tensor("f32", (4, 6))],
        (lambda t, f=fn: f(t)) if op == "sum" else (lambda t, f=fn: f(t, dim=(0, 1))))
add("sum_bool", "  %r = sum(%i0) {dims = [1]}\n  return %r", [tensor("bool", (3, 7))], lambda t: t.sum(dim=1))
for dt in FLOATS:
    add(f"mean_{dt}", "  %r = mean(%i0) {dims = [1]}\n  return %r", [tensor(dt, (4, 9))],
        (lambda t: t.mean(dim=1)))
    add(f"softmax_{dt}", "  %r = softmax(%i0) {dim = -1}\n  return %r", [tensor(dt, (3, 8)) * 3],
        (lambda t: torch.softmax(t, dim=-1)))
    add(f"softmax_dim0_{dt}", "  %r = softmax(%i0) {dim = 0}\n  return %r", [tensor(dt, (5, 3))],
        (lambda t: torch.softmax(t, dim=0)))
    add(f"log_softmax_{dt}", "  %r = log_softmax(%i0) {dim = 1}\n  return %r", [tensor(dt, (2, 6, 3))],
        (lambda t: torch.log_softmax(t, dim=1)))
    add(f"layer_norm_{dt}", "  %r = layer_norm(%i0, %i1, %i2) {eps = 1e-5}\n  return %r",
        [tensor(dt, (4, 3, 8)), tensor(dt, (3, 8)), tensor(dt, (3, 8))],
        (lambda x, w, b: torch.nn.functional.layer_norm(x, (3, 8), w, b, eps=1e-5)))
    add(f"layer_norm_nobias_{dt}", "  %r = layer_norm(%i0, %i1)\n  return %r", [tensor(dt, (5, 16)), tensor(dt, (16,))],
        (lambda x, w: torch.nn.functional.layer_norm(x, (16,), w, None)))

# ---- linear algebra ------------------------------------------------------------
for dt in FLOATS:
    add(f"matmul_{dt}", "  %r = matmul(%i0, %i1)\n  return %r", [tensor(dt, (4, 6)), tensor(dt, (6, 5))],
        (torch.matmul))
    add(f"matmul_batched_{dt}", "  %r = matmul(%i0, %i1)\n  return %r", [tensor(dt, (2, 1, 3, 4)), tensor(dt, (3, 4, 2))],
        (torch.matmul))
    add(f"linear_{dt}", "  %r = linear(%i0, %i1, %i2)\n  return %r",
        [tensor(dt, (2, 3, 8)), tensor(dt, (5, 8)), tensor(dt, (5,))], (torch.nn.functional.linear))
add("matmul_vector_matrix_f32", "  %r = matmul(%i0, %i1)\n  return %r", [tensor("f32", (4,)), tensor("f32", (2, 4, 3))],
    torch.matmul)
add("matmul_matrix_vector_f32", "  %r = matmul(%i0, %i1)\n  return %r", [tensor("f32", (3, 4)), tensor("f32", (4,))],
    torch.matmul)
add("matmul_dot_f64", "  %r = matmul(%i0, %i1)\n  return %r", [tensor("f64", (7,)), tensor("f64", (7,))], torch.matmul)
add("linear_nobias_f32", "  %r = linear(%i0, %i1)\n  return %r", [tensor("f32", (6,)), tensor("f32", (3, 6))],
    torch.nn.functional.linear)
for dt in ["f32", "f64"]:
    for n in [3, 8]:
        a = tensor(dt, (4, n, n))
        a = a + a.transpose(-1, -2)
        add(f"eigh_{n}_{dt}", "  %w, %v = eigh(%i0)\n  return %w, %v", [a], lambda t: list(torch.linalg.eigh(t)))
    a = tensor(dt, (5, 5))  # only the upper triangle is read
    add(f"eigh_upper_{dt}", "  %w, %v = eigh(%i0) {uplo = \"U\"}\n  return %w, %v", [a],
        lambda t: list(torch.linalg.eigh(t, UPLO="U")))

# ---- shape ops ---------------------------------------------------------------
for dt in ["f32", "bf16", "i64", "bool"]:
    x = tensor(dt, (2, 3, 4))
    add(f"reshape_{dt}", "  %r = reshape(%i0) {shape = [4, -1]}\n  return %r", [x], lambda t: t.reshape(4, -1))
    add(f"permute_{dt}", "  %r = permute(%i0) {dims = [2, 0, 1]}\n  return %r", [x], lambda t: t.permute(2, 0, 1))
    add(f"transpose_{dt}", "  %r = transpose(%i0) {dim0 = 0, dim1 = -1}\n  return %r", [x],
        lambda t: t.transpose(0, -1))
    add(f"slice_{dt}", "  %r = slice(%i0) {dim = 2, start = -3, end = 4, step = 2}\n  return %r", [x],
        lambda t: t[:, :, -3:4:2])
    add(f"concat_{dt}", "  %r = concat(%i0, %i1, %i0) {dim = 1}\n  return %r", [x, tensor(dt, (2, 1, 4))],
        lambda a, b: torch.cat([a, b, a], dim=1))
    add(f"expand_{dt}", "  %r = expand(%i0) {shape = [2, 3, -1, 5]}\n  return %r", [tensor(dt, (3, 1, 5))],
        lambda t: t.expand(2, 3, -1, 5).contiguous())
for dt in ["f16", "i32"]:
    x = tensor(dt, (3, 1, 4))
    add(f"squeeze_{dt}", "  %r = squeeze(%i0) {dim = 1}\n  return %r", [x], lambda t: t.squeeze(1))
    add(f"squeeze_all_{dt}", "  %r = squeeze(%i0)\n  return %r", [tensor(dt, (1, 3, 1))], lambda t: t.squeeze())
    add(f"unsqueeze_{dt}", "  %r = unsqueeze(%i0) {dim = -1}\n  return %r", [x], lambda t: t.unsqueeze(-1))

# ---- creation and control flow --------------------------------------------------
for dt in ["f32", "f64", "i32", "bf16"]:
    value = "[[1, 2, 3], [4, 5, 6]]" if dt == "i32" else "[[1.5, -2.0, 3.25], [0.0, 5.0, -6.5]]"
    vals = [[1, 2, 3], [4, 5, 6]] if dt == "i32" else [[1.5, -2.0, 3.25], [0.0, 5.0, -6.5]]
    add(f"constant_{dt}", f"  %c = constant() {{value = {value}}} : {dt}[2, 3]\n  %r = add(%i0, %c)\n  return %r",
        [tensor(dt, (2, 3))], lambda t, v=vals: t + torch.tensor(v, dtype=t.dtype))
    fill = "7" if dt == "i32" else "0.25"
    add(f"full_{dt}", f"  %c = full() {{value = {fill}}} : {dt}[3]\n  %r = mul(%i0, %c)\n  return %r",
        [tensor(dt, (2, 3))], lambda t, f=fill: t * torch.full((3,), float(f), dtype=t.dtype))
add("constant_bool", "  %c = constant() {value = [true, false, true]}\n  %r = logical_and(%i0, %c)\n  return %r",
    [tensor("bool", (2, 3))], lambda t: torch.logical_and(t, torch.tensor([True, False, True])))
for taken in [True, False]:
    pred = torch.tensor(taken)
    add(f"cond_{'then' if taken else 'else'}",
        "  %r = cond(%i0, %i1, %i2) then(%a: f32[3, 4], %b: f32[4]) {\n    %s = add(%a, %b)\n    %t = relu(%s)\n"
        "    return %t\n  } else(%a: f32[3, 4], %b: f32[4]) {\n    %m = mul(%a, %b)\n    return %m\n  }\n  return %r",
        [pred, tensor("f32", (3, 4)), tensor("f32", (4,))],
        lambda p, a, b: torch.relu(a + b) if bool(p) else a * b)

# A small composite: the MLP of examples/mlp.graph on fixed weights.
x, w1, b1, w2, b2 = (tensor("f32", s) for s in [(5, 16), (32, 16), (32,), (4, 32), (4,)])
add("mlp_f32", "  %h = linear(%i0, %i1, %i2)\n  %a = relu(%h)\n  %l = linear(%a, %i3, %i4)\n"
    "  %p = softmax(%l) {dim = -1}\n  return %p", [x, w1, b1, w2, b2],
    lambda x, w1, b1, w2, b2: torch.softmax(torch.nn.functional.linear(torch.relu(
        torch.nn.functional.linear(x, w1, b1)), w2, b2), dim=-1))


# ---- indexing (added last, so that the cases above keep their random draws) --
def indices(dtype, shape, size):
    """Indices in [-size, size): negative ones count from the end."""
    return torch.from_numpy(rng.randint(-size, size, size=shape)).to(TORCH[dtype])


for dt in ["f32", "f16", "i64", "bool"]:
    x = tensor(dt, (4, 5, 3))
    for idt, dim, shape in [("i64", 0, (6,)), ("i32", 1, (2, 3)), ("i64", 2, (2,))]:
        idx = indices(idt, shape, x.shape[dim])
        add(f"index_select_{dt}_dim{dim}_{idt}", f"  %r = index_select(%i0, %i1) {{dim = {dim}}}\n  return %r", [x, idx],
            lambda t, i, d=dim: torch.index_select(t, d, (i % t.shape[d]).flatten().long()).reshape(
                t.shape[:d] + i.shape + t.shape[d + 1:]), upcast=False)
    for idt, dim, shape in [("i64", 0, (3, 5, 3)), ("i32", 1, (4, 7, 2)), ("i64", 2, (2, 5, 4))]:
        idx = indices(idt, shape, x.shape[dim])
        add(f"gather_{dt}_dim{dim}_{idt}", f"  %r = gather(%i0, %i1) {{dim = {dim}}}\n  return %r", [x, idx],
            lambda t, i, d=dim: torch.gather(t, d, (i % t.shape[d]).long()), upcast=False)
# An embedding lookup that fuses with what follows it.
table, ids, scale = tensor("f32", (10, 8)), indices("i64", (3, 4), 10), tensor("f32", (8,))
add("embedding_f32", "  %e = index_select(%i0, %i1) {dim = 0}\n  %s = mul(%e, %i2)\n  %r = tanh(%s)\n  return %r",
    [table, ids, scale], lambda t, i, s: torch.tanh(t[i % 10] * s))


# ---- the ops of real models (added last, so that the cases above keep their draws) --
F = torch.nn.functional
for op, fn in {"floor": torch.floor, "ceil": torch.ceil, "round": torch.round}.items():
    for dt in FLOATS:
        x = tensor(dt, (4, 5)) * 3
        x[0, :3] = torch.tensor([0.5, 1.5, -2.5]).to(x.dtype)  # halves: round goes to even
        add(f"{op}_{dt}", f"  %r = {op}(%i0)\n  return %r", [x], fn)
for dt in FLOATS + INTS:
    x = tensor(dt, (3, 4, 5))
    if dt in INTS:
        x = x % 5 - 2  # products that stay small
    add(f"prod_{dt}", "  %r = prod(%i0) {dims = [2]}\n  return %r", [x], lambda t: torch.prod(t, dim=2))
    add(f"prod_keepdim_{dt}", "  %r = prod(%i0) {dims = [0], keepdim = true}\n  return %r", [x],
        lambda t: torch.prod(t, dim=0, keepdim=True))
    for op, fn in {"argmax": torch.argmax, "argmin": torch.argmin}.items():
        y = x.clone()
        y[0, 1, 3] = y[0, 1, 0]  # a tie: the first index wins
        add(f"{op}_{dt}", f"  %r = {op}(%i0) {{dim = 1}}\n  return %r", [y], lambda t, f=fn: f(t, dim=1))
        add(f"{op}_last_keepdim_{dt}", f"  %r = {op}(%i0) {{dim = -1, keepdim = true}}\n  return %r", [y],
            lambda t, f=fn: f(t, dim=-1, keepdim=True))
    add(f"cumsum_{dt}", "  %r = cumsum(%i0) {dim = 1}\n  return %r", [x], lambda t: torch.cumsum(t, dim=1))
    add(f"cumsum_exclusive_reverse_{dt}", "  %r = cumsum(%i0) {dim = -1, exclusive = true, reverse = true}\n  return %r",
        [x], lambda t: torch.flip(torch.cumsum(torch.flip(t, [-1]), dim=-1), [-1]) - t)
for dt in FLOATS:
    x, mean, var = tensor(dt, (2, 3, 4, 5)), tensor(dt, (3,)), tensor(dt, (3,), "positive")
    w, b = tensor(dt, (3,)), tensor(dt, (3,))
    add(f"batch_norm_{dt}", "  %r = batch_norm(%i0, %i1, %i2, %i3, %i4) {eps = 1e-3}\n  return %r",
        [x, mean, var, w, b], lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False, eps=1e-3))
    x, w, b = tensor(dt, (2, 6, 3, 4)), tensor(dt, (6,)), tensor(dt, (6,))
    add(f"group_norm_{dt}", "  %r = group_norm(%i0, %i1, %i2) {groups = 3}\n  return %r", [x, w, b],
        lambda x, w, b: F.group_norm(x, 3, w, b))
    add(f"group_norm_instance_{dt}", "  %r = group_norm(%i0, %i1, %i2) {groups = 6, eps = 1e-3}\n  return %r",
        [x, w, b], lambda x, w, b: F.group_norm(x, 6, w, b, eps=1e-3))
    # Convolutions: 2-D with stride, asymmetric padding, dilation and groups;
    # depthwise; 1-D with a bias; transposed with stride and output padding.
    x, w, bias = tensor(dt, (2, 4, 7, 6)), tensor(dt, (6, 2, 3, 2)), tensor(dt, (6,))
    add(f"conv2d_{dt}", "  %r = conv(%i0, %i1, %i2) {stride = [2, 1], padding = [1, 0, 2, 1], dilation = [1, 2], "
        "groups = 2}\n  return %r", [x, w, bias],
        lambda x, w, b: F.conv2d(F.pad(x, (0, 1, 1, 2)), w, b, stride=(2, 1), dilation=(1, 2), groups=2))
    x, w = tensor(dt, (1, 3, 5, 5)), tensor(dt, (3, 1, 3, 3))
    add(f"conv2d_depthwise_{dt}", "  %r = conv(%i0, %i1) {padding = [1, 1, 1, 1], groups = 3}\n  return %r", [x, w],
        lambda x, w: F.conv2d(x, w, padding=1, groups=3))
    x, w, bias = tensor(dt, (2, 3, 9)), tensor(dt, (4, 3, 3)), tensor(dt, (4,))
    add(f"conv1d_{dt}", "  %r = conv(%i0, %i1, %i2) {stride = [2], padding = [1, 1]}\n  return %r", [x, w, bias],
        lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1))
    x, w, bias = tensor(dt, (1, 4, 3, 4)), tensor(dt, (4, 3, 3, 3)), tensor(dt, (6,))
    add(f"conv_transpose2d_{dt}", "  %r = conv_transpose(%i0, %i1, %i2) {stride = [2, 2], padding = [1, 0, 1, 0], "
        "output_padding = [1, 0], groups = 2}\n  return %r", [x, w, bias],
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=(1, 0), output_padding=(1, 0), groups=2))
    x = tensor(dt, (2, 3, 7, 6))
    add(f"max_pool_{dt}", "  %r = max_pool(%i0) {kernel = [3, 3], stride = [2, 2], padding = [1, 1, 1, 1], "
        "ceil_mode = true}\n  return %r", [x], lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True))
    add(f"avg_pool_{dt}", "  %r = avg_pool(%i0) {kernel = [3, 2], stride = [2, 2], padding = [1, 1, 1, 1], "
        "ceil_mode = true}\n  return %r", [x], lambda x: F.avg_pool2d(x, (3, 2), 2, 1, ceil_mode=True, count_include_pad=False))
    add(f"avg_pool_include_pad_{dt}", "  %r = avg_pool(%i0) {kernel = [3, 3], stride = [2, 2], padding = [1, 1, 1, 1], "
        "count_include_pad = true}\n  return %r", [x],
        lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=True))
    x = tensor(dt, (2, 3, 4, 5))
    add(f"resize_linear_{dt}", "  %r = resize(%i0) {size = [2, 3, 8, 7], mode = \"linear\", coordinates = "
        "\"pytorch_half_pixel\"}\n  return %r", [x],
        lambda x: F.interpolate(x, size=(8, 7), mode="bilinear", align_corners=False))
    add(f"resize_linear_corners_{dt}", "  %r = resize(%i0) {size = [2, 3, 7, 9], mode = \"linear\", coordinates = "
        "\"align_corners\"}\n  return %r", [x],
        lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True))
for dt in INTS:
    x = tensor(dt, (2, 3, 5, 6))
    add(f"max_pool_{dt}", "  %r = max_pool(%i0) {kernel = [2, 3], stride = [2, 2], padding = [1, 1, 1, 1]}\n"
        "  return %r", [x],
        lambda x: F.pad(x, (1, 1, 1, 1), value=torch.iinfo(x.dtype).min).unfold(2, 2, 2).unfold(3, 3, 2).amax((-2, -1)),
        upcast=False)
for dt in ALL:
    x = tensor(dt, (2, 3, 4, 5))
    idx = indices("i64", (2, 4, 2), 3)
    add(f"gather_nd_{dt}", "  %r = gather_nd(%i0, %i1) {batch_dims = 1}\n  return %r", [x, idx],
        lambda x, i: torch.stack([x[b][i[b, :, 0] % 3, i[b, :, 1] % 4] for b in range(2)]), upcast=False)
    idx2 = indices("i64", (3, 3), 2)
    add(f"gather_nd_full_{dt}", "  %r = gather_nd(%i0, %i1)\n  return %r", [x, idx2],
        lambda x, i: x[i[:, 0] % 2, i[:, 1] % 3, i[:, 2] % 4], upcast=False)
    # Nearest: torch's mode "nearest" is asymmetric coordinates, floor.
    add(f"resize_nearest_{dt}", "  %r = resize(%i0) {size = [2, 3, 8, 3]}\n  return %r", [x],
        lambda x: x[:, :, torch.arange(8) * 4 // 8][:, :, :, torch.arange(3) * 5 // 3], upcast=False)
for dt in FLOATS + INTS:
    start, step = ("0.5", "0.25") if dt in FLOATS else ("-3", "2")
    add(f"iota_{dt}", f"  %r = iota() {{dim = 1, start = {start}, step = {step}}} : {dt}[3, 6]\n  %s = add(%r, %i0)\n"
        "  return %s", [tensor(dt, (3, 6))],
        lambda x, a=float(start), s=float(step): (torch.arange(6, dtype=torch.float64) * s + a).to(x.dtype) + x,
        upcast=False)


def scatter(x, i, u, combine=None):
    """x with u written (or combined) at the coordinates in i's last dim, update by update."""
    out = x.clone()
    for j in range(i.shape[0]):
        at = tuple(int(c) for c in i[j])
        out[at] = u[j] if combine is None else combine(out[at], u[j])
    return out


for dt in ALL:
    x = tensor(dt, (4, 5, 3))
    rows = torch.tensor([[3], [0], [-2]])
    add(f"scatter_nd_{dt}", "  %r = scatter_nd(%i0, %i1, %i2)\n  return %r", [x, rows, tensor(dt, (3, 5, 3))],
        lambda x, i, u: scatter(x, i, u), upcast=False)
for dt in FLOATS + INTS:
    # Repeated coordinates where a second rounding cannot differ from torch's one.
    repeated = dt in ("f32", "f64") or dt in INTS
    cells = torch.tensor([[1, 2], [3, 0], [1, 2] if repeated else [2, 2], [-1, 4]])
    for reduction, combine in [("add", torch.add), ("mul", torch.mul), ("max", torch.maximum), ("min", torch.minimum)]:
        add(f"scatter_nd_{reduction}_{dt}", f"  %r = scatter_nd(%i0, %i1, %i2) {{reduction = \"{reduction}\"}}\n"
            "  return %r", [tensor(dt, (4, 5, 2)), cells, tensor(dt, (4, 2))],
            lambda x, i, u, c=combine: scatter(x, i, u, c), upcast=False)


# ---- math functions, sign, integer and float division -----------------------
# (After every case above, so that adding these left those cases' random
# inputs as they were.)
more_unary = {"tan": torch.tan, "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "sinh": torch.sinh,
              "cosh": torch.cosh, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
              "expm1": torch.expm1, "log1p": torch.log1p, "log2": torch.log2, "log10": torch.log10,
              "trunc": torch.trunc}
for op, fn in more_unary.items():
    for dt in FLOATS:
        x = tensor(dt, (3, 5))
        if op in ("asin", "acos", "atanh"):
            x = torch.tanh(x.double()).to(x.dtype) * 0.99  # inside (-1, 1)
        elif op in ("acosh", "log2", "log10"):
            x = x.abs() + 1.0
        elif op == "log1p":
            x = x.abs() * 0.5 - 0.25  # near 0, where log1p's accuracy is the point
        elif op == "expm1":
            x = x * 1e-3  # near 0, where expm1's accuracy is the point
        elif op == "trunc":
            x = x * 4
        add(f"{op}_{dt}", f"  %r = {op}(%i0)\n  return %r", [x], fn)
for dt in FLOATS + INTS:
    x = tensor(dt, (3, 6))
    if dt in FLOATS:
        x[0, :3] = torch.tensor([float("nan"), -0.0, 0.0]).to(x.dtype)
    else:
        x[0, :2] = 0
    add(f"sign_{dt}", "  %r = sign(%i0)\n  return %r", [x], torch.sign)
for dt in FLOATS:
    add(f"atan2_{dt}", "  %r = atan2(%i0, %i1)\n  return %r", [tensor(dt, (3, 4)), tensor(dt, (4,))], torch.atan2)
divisions = {"fmod": torch.fmod, "remainder": torch.remainder, "floor_divide": torch.floor_divide}
for op, fn in divisions.items():
    for dt in FLOATS + INTS:
        a = tensor(dt, (4, 6)) * (4 if dt in FLOATS else 1)
        b = tensor(dt, (6,))
        if dt in INTS:
            b = torch.where(b == 0, torch.ones_like(b), b)  # a zero divisor is an error (the reference's, torch's)
            b[0], b[1] = -1, 1
            b[2] = 7
        else:
            b[0] = -2.5
        add(f"{op}_{dt}", f"  %r = {op}(%i0, %i1)\n  return %r", [a, b], fn)



# ---- grouped_mm (after the cases above, leaving their inputs as they were) ---
def grouped_mm(x, w, offs):
    """transformers' grouped_mm_fallback: rows [offs[g-1], offs[g]) of x
    times w[g]; rows past the last offset stay zero."""
    out = torch.zeros(x.shape[0], w.shape[2], dtype=x.dtype)
    start = 0
    for g, end in enumerate(offs.tolist()):
        out[start:end] = x[start:end] @ w[g]
        start = end
    return out


for dt in FLOATS:
    # Group 1 is empty; the last two rows are past the last offset.
    for odt, offs in (("i32", torch.tensor([2, 2, 5, 7], dtype=torch.int32)),
                      ("i64", torch.tensor([3, 4, 4, 9], dtype=torch.int64))):
        add(f"grouped_mm_{dt}_{odt}", "  %r = grouped_mm(%i0, %i1, %i2)\n  return %r",
            [tensor(dt, (9, 5)), tensor(dt, (4, 5, 3)), offs], grouped_mm)



# ---- solve_triangular (after the cases above, leaving their inputs as they were)
for dt in ("f32", "f64"):
    for upper in (False, True):
        for unit in (False, True):
            # A dominant diagonal keeps the system well conditioned; a unit
            # triangular solve must ignore the diagonal, so it is not 1.
            a = tensor(dt, (2, 4, 4)) * 0.5 + 3 * torch.eye(4, dtype=TORCH[dt])
            attrs = f"{{upper = {'true' if upper else 'false'}" + (", unitriangular = true}" if unit else "}")
            add(f"solve_triangular_{'upper' if upper else 'lower'}{'_unit' if unit else ''}_{dt}",
                f"  %r = solve_triangular(%i0, %i1) {attrs}\n  return %r", [a, tensor(dt, (2, 4, 3))],
                lambda a, b, u=upper, t=unit: torch.linalg.solve_triangular(a, b, upper=u, unitriangular=t))



# grouped_mm over [E, n, k] weights (a linear layer's experts, read transposed)
for dt in ("bf16", "f32", "f64"):
    offs = torch.tensor([1, 4, 4, 7], dtype=torch.int64)
    add(f"grouped_mm_transposed_{dt}", "  %r = grouped_mm(%i0, %i1, %i2) {transposed = true}\n  return %r",
        [tensor(dt, (8, 5)), tensor(dt, (4, 3, 5)), offs], lambda x, w, o: grouped_mm(x, w.transpose(1, 2), o))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for name, text, inputs, outputs in cases:
        with open(os.path.join(OUT, f"{name}.graph"), "w") as f:
            f.write(text)
        for k, t in enumerate(inputs):
            save_npy(os.path.join(OUT, f"{name}.in{k}.npy"), t)
        for k, t in enumerate(outputs):
            save_npy(os.path.join(OUT, f"{name}.out{k}.npy"), t)
    print(f"wrote {len(cases)} golden cases to {OUT}")


if __name__ == "__main__":
    main()
