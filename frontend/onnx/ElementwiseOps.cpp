// ONNX elementwise ops → graphc pointwise ops. Most map one to one; the
// activations ONNX defines as functions (Elu, Selu, HardSwish, Softplus,
// ...) are written out in the primitives, as their ONNX function bodies
// are, so they fuse like any other pointwise work.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "frontend/onnx/ImportContext.h"
#include "ir/Builder.h"

namespace graphc::frontend::onnximport {

namespace {

using ir::OpId;

template <OpId op>
void unary(NodeContext& c) {
  c.setOutput(0, c.op(op, {c.required(0)}));
}

template <OpId op>
void unaryFloat(NodeContext& c) {
  needFloat(c, c.required(0));
  c.setOutput(0, c.op(op, {c.required(0)}));
}

/// The second operand of a binary op as NumPy broadcasting wants it.
/// Before opset 7, `broadcast = 1` with `axis` aligned B's dims with A's
/// from `axis` on (B = [3] against A = [2, 3, 4] at axis 1); without
/// `axis`, with A's trailing dims, which is NumPy's rule.
ir::Value* legacyBroadcast(NodeContext& c, ir::Value* a, ir::Value* b) {
  if (!c.has("broadcast") && !c.has("axis")) return b;
  if (c.intAttr("broadcast", 0) == 0) return b;
  if (!c.has("axis")) return b;
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", 0), a->type.rank());
  const int64_t trailing = a->type.rank() - axis - b->type.rank();
  if (trailing < 0)
    c.fail(fmt::format("B {} does not fit A {} from axis {}", ir::toString(b->type), ir::toString(a->type), axis));
  return c.withTrailingOnes(b, trailing);
}

// ---- arithmetic on symbolic shapes ------------------------------------------

/// Both operands as shapes when one is a symbolic one and the other a
/// shape too or integers of rank 0 or 1 known when the graph is built,
/// broadcast to the same length (a one-element side repeats); otherwise
/// (a mask's [1, 1, 1, 1] times a length) nullopt, and the op computes on
/// the shape as a tensor.
std::optional<std::pair<ShapeValue, ShapeValue>> shapeOperands(NodeContext& c, size_t a, size_t b) {
  if (!c.isShape(a) && !c.isShape(b)) return std::nullopt;
  for (size_t k : {a, b}) {
    if (c.isShape(k)) continue;
    const std::optional<runtime::Tensor> t = c.constant(k);
    if (!t || !ir::isInteger(t->dtype()) || t->rank() > 1) return std::nullopt;
  }
  ShapeValue x = c.shapeInput(a, "a shape operand"), y = c.shapeInput(b, "a shape operand");
  if (x.dims.size() != y.dims.size()) {
    if (x.dims.size() == 1)
      x.dims.assign(y.dims.size(), x.dims[0]);
    else if (y.dims.size() == 1)
      y.dims.assign(x.dims.size(), y.dims[0]);
    else
      c.fail(fmt::format("shapes of {} and {} sizes do not broadcast", x.dims.size(), y.dims.size()));
  }
  x.scalar = x.scalar && y.scalar;
  return std::make_pair(x, y);
}

/// Mul, Div, Add, Sub of sizes, where one is symbolic (TorchScript exports
/// compute a reshape's target as shape[0] * shape[1]; a decode step with a
/// KV cache, the cache's length plus one): products, exact quotients, sums
/// and differences stay symbolic sizes (a difference that is negative
/// whatever the symbols, or a division that is not exact, is unsupported).
template <OpId op>
bool shapeArithmetic(NodeContext& c) {
  auto operands = shapeOperands(c, 0, 1);
  if (!operands) return false;
  auto& [x, y] = *operands;
  ShapeValue out;
  out.scalar = x.scalar;
  for (size_t k = 0; k < x.dims.size(); ++k) {
    const ir::Dim& a = x.dims[k];
    const ir::Dim& b = y.dims[k];
    std::optional<ir::Dim> r;
    if (a.isStatic() && b.isStatic()) {
      runtime::Tensor t(ir::DType::I64, {});
      if (op == OpId::Div) {
        if (b.size == 0) c.fail("a size is divided by 0");
        r = ir::Dim::of(a.size / b.size);
      } else {
        r = ir::Dim::of(op == OpId::Mul   ? checkedMul(c, a.size, b.size)
                        : op == OpId::Add ? checkedAdd(c, a.size, b.size)
                                          : checkedAdd(c, a.size, -b.size));
      }
    } else if (op == OpId::Mul) {
      r = ir::multiply(a, b);
    } else if (op == OpId::Div) {
      r = ir::divide(a, b);
    } else if (op == OpId::Add) {
      r = ir::add(a, b);
    } else {
      r = ir::subtract(a, b);
    }
    if (!r)
      c.unsupported(fmt::format("{} of symbolic sizes", c.node.op_type()),
                    fmt::format("{} of the sizes {} and {} is not a size graphc can write (an exact quotient or "
                                "a sum of products of symbols that is not negative)",
                                c.node.op_type(), ir::toString(a), ir::toString(b)));
    out.dims.push_back(*r);
  }
  c.setShapeOutput(0, out);
  return true;
}

/// Equal of sizes, decided at import time: equal dims are equal, a
/// symbolic size is never negative, and other pairs are unknown.
bool shapeEquality(NodeContext& c) {
  auto operands = shapeOperands(c, 0, 1);
  if (!operands) return false;
  auto& [x, y] = *operands;
  runtime::Tensor out(ir::DType::Bool,
                      x.scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(x.dims.size())});
  for (size_t k = 0; k < x.dims.size(); ++k) {
    const ir::Dim& a = x.dims[k];
    const ir::Dim& b = y.dims[k];
    bool equal;
    if (a == b)
      equal = true;
    else if (a.isStatic() && b.isStatic())
      equal = false;
    else if ((a.isStatic() && a.size < 0) || (b.isStatic() && b.size < 0))
      equal = false;
    else
      c.unsupported("of symbolic sizes", fmt::format("whether {} equals {} is not known when the graph is built",
                                                     ir::toString(a), ir::toString(b)));
    out.setInt(static_cast<int64_t>(k), equal);
  }
  c.setOutput(0, c.constantOf(out));
  return true;
}

/// Add, Sub, Mul and the comparisons: graphc's ops reject bool operands of
/// arithmetic, as ONNX does.
template <OpId op>
void binary(NodeContext& c) {
  if constexpr (op == OpId::Add || op == OpId::Sub || op == OpId::Mul)
    if (shapeArithmetic<op>(c)) return;
  if constexpr (op == OpId::Eq)
    if (shapeEquality(c)) return;
  ir::Value* a = c.required(0);
  c.setOutput(0, c.op(op, {a, legacyBroadcast(c, a, c.required(1))}));
}

/// Max, Min, Sum, Mean: variadic, folded left to right.
template <OpId op>
void variadic(NodeContext& c) {
  ir::Value* acc = c.required(0);
  for (size_t k = 1; k < c.numInputs(); ++k) acc = c.op(op, {acc, c.required(k)});
  c.setOutput(0, acc);
}

void mean(NodeContext& c) {
  needFloat(c, c.required(0));
  ir::Value* sum = c.required(0);
  for (size_t k = 1; k < c.numInputs(); ++k) sum = c.op(OpId::Add, {sum, c.required(k)});
  const double n = static_cast<double>(c.numInputs());
  c.setOutput(0, n == 1 ? sum : c.op(OpId::Div, {sum, c.scalarLike(sum, n)}));
}

/// Integer division truncating toward zero, through f64 (exact while the
/// operands' magnitudes stay under 2^53; graphc has no integer division).
/// C's truncating integer quotient: a - fmod(a, b) is a multiple of b, so
/// its floor division is exact.
ir::Value* truncatedQuotient(NodeContext& c, ir::Value* a, ir::Value* b) {
  return c.op(OpId::FloorDivide, {c.op(OpId::Sub, {a, c.op(OpId::Fmod, {a, b})}), b});
}

void div(NodeContext& c) {
  if (shapeArithmetic<OpId::Div>(c)) return;
  ir::Value* a = c.required(0);
  ir::Value* b = legacyBroadcast(c, a, c.required(1));
  if (ir::isInteger(a->type.dtype) && a->type.dtype == b->type.dtype)
    c.setOutput(0, truncatedQuotient(c, a, b));
  else
    c.setOutput(0, c.op(OpId::Div, {a, b}));
}

/// Mod: fmod = 1 is C's fmod (the dividend's sign), fmod = 0 Python's
/// remainder (the divisor's sign), which ONNX allows on integers only.
void mod(NodeContext& c) {
  ir::Value* a = c.required(0);
  ir::Value* b = legacyBroadcast(c, a, c.required(1));
  const bool fmod = c.intAttr("fmod", 0) != 0;
  if (!fmod && !ir::isInteger(a->type.dtype)) c.fail("'fmod' must be 1 for floating-point operands");
  c.setOutput(0, c.op(fmod ? OpId::Fmod : OpId::Remainder, {a, b}));
}

void pow(NodeContext& c) {
  ir::Value* base = c.required(0);
  ir::Value* exponent = legacyBroadcast(c, base, c.required(1));
  needFloat(c, base);
  // ONNX lets the exponent have another numeric dtype; graphc's pow does not.
  c.setOutput(0, c.op(OpId::Pow, {base, c.cast(exponent, base->type.dtype)}));
}

void isNaN(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  c.setOutput(0, c.op(OpId::Ne, {x, x}));
}

void isInf(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  const double inf = std::numeric_limits<double>::infinity();
  const bool positive = c.intAttr("detect_positive", 1) != 0;
  const bool negative = c.intAttr("detect_negative", 1) != 0;
  ir::Value* isPos = c.op(OpId::Eq, {x, c.scalarLike(x, inf)});
  ir::Value* isNeg = c.op(OpId::Eq, {x, c.scalarLike(x, -inf)});
  if (positive && negative)
    c.setOutput(0, c.op(OpId::LogicalOr, {isPos, isNeg}));
  else if (positive)
    c.setOutput(0, isPos);
  else if (negative)
    c.setOutput(0, isNeg);
  else
    c.setOutput(0, c.op(OpId::LogicalAnd, {isPos, isNeg}));  // never both: all false
}

void logicalNot(NodeContext& c) { c.setOutput(0, c.op(OpId::LogicalNot, {c.required(0)})); }

void xorOp(NodeContext& c) {
  ir::Value* a = c.required(0);
  if (a->type.dtype != ir::DType::Bool) c.fail(fmt::format("operands must be bool, got {}", ir::toString(a->type)));
  c.setOutput(0, c.op(OpId::Ne, {a, legacyBroadcast(c, a, c.required(1))}));
}

void where(NodeContext& c) {
  if (c.isShape(1) || c.isShape(2)) {  // sizes chosen by a condition known now
    std::optional<runtime::Tensor> condition = c.constant(0);
    if (!condition)
      c.unsupported("of symbolic sizes", "choosing between symbolic sizes needs a condition known at import time");
    auto operands = shapeOperands(c, 1, 2);
    auto& [x, y] = *operands;
    if (condition->numel() != 1 && static_cast<size_t>(condition->numel()) != x.dims.size())
      c.fail("the condition does not broadcast against the sizes");
    ShapeValue out = x;
    for (size_t k = 0; k < x.dims.size(); ++k)
      out.dims[k] = condition->getInt(condition->numel() == 1 ? 0 : static_cast<int64_t>(k)) ? x.dims[k] : y.dims[k];
    out.scalar = x.scalar && condition->rank() == 0;
    c.setShapeOutput(0, out);
    return;
  }
  c.setOutput(0, c.op(OpId::Where, {c.required(0), c.required(1), c.required(2)}));
}

void cast(NodeContext& c) {
  const int64_t to = c.intAttr("to", 0);
  std::optional<ir::DType> t = dtypeOf(static_cast<int32_t>(to));
  if (!t)
    c.unsupported("to " + onnxTypeName(static_cast<int32_t>(to)),
                  fmt::format("cast to {} is not supported", onnxTypeName(static_cast<int32_t>(to))));
  if (c.isShape(0) && (*t == ir::DType::I64 || *t == ir::DType::I32)) {  // sizes stay sizes
    ShapeValue v = c.shapeInput(0, "the input");
    v.dtype = *t;
    c.setShapeOutput(0, v);
    return;
  }
  c.setOutput(0, c.op(OpId::Cast, {c.required(0)}, oneAttr("dtype", ir::Attribute::ofDType(*t))));
}

void castLike(NodeContext& c) {
  c.setOutput(0,
              c.op(OpId::Cast, {c.required(0)}, oneAttr("dtype", ir::Attribute::ofDType(c.required(1)->type.dtype))));
}

/// Clip: bounds are attributes before opset 11, optional inputs after; a
/// bound known at import time becomes clamp's attribute, one computed at
/// run time a maximum/minimum.
void clip(NodeContext& c) {
  ir::Value* x = c.required(0);
  ir::AttrMap attrs;
  ir::Value* y = x;
  // Saturating for an integer x: a bound of 4e37 is INT64_MAX, not undefined.
  auto bound = [&](double v) {
    return ir::isFloat(x->type.dtype) ? ir::Attribute::ofFloat(v) : ir::scalarAttribute(ir::DType::I64, v);
  };
  std::vector<std::pair<size_t, OpId>> runtimeBounds;
  if (c.opset < 11) {
    if (c.has("min")) attrs.set("min", bound(c.floatAttr("min", 0)));
    if (c.has("max")) attrs.set("max", bound(c.floatAttr("max", 0)));
  } else {
    for (auto [k, name, op] :
         {std::tuple{size_t{1}, "min", OpId::Maximum}, std::tuple{size_t{2}, "max", OpId::Minimum}}) {
      if (!c.input(k)) continue;
      if (auto t = c.constant(k)) {
        if (t->numel() != 1) c.fail(fmt::format("'{}' must be a scalar, it is {}", name, ir::toString(t->type())));
        attrs.set(name, ir::isFloat(x->type.dtype) ? ir::Attribute::ofFloat(t->getDouble(0))
                                                   : ir::Attribute::ofInt(t->getInt(0)));
      } else {
        runtimeBounds.emplace_back(k, op);
      }
    }
  }
  if (!attrs.empty()) y = c.op(OpId::Clamp, {y}, attrs);
  for (auto [k, op] : runtimeBounds) y = c.op(op, {y, c.input(k)});
  c.setOutput(0, y);
}

// ---- activations ONNX defines as functions ----------------------------------

ir::Value* x0(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  return x;
}

void elu(NodeContext& c) {
  ir::Value* x = x0(c);
  const double alpha = c.floatAttr("alpha", 1.0f);
  ir::Value* one = c.scalarLike(x, 1);
  ir::Value* negative = c.op(OpId::Mul, {c.scalarLike(x, alpha), c.op(OpId::Sub, {c.op(OpId::Exp, {x}), one})});
  c.setOutput(0, c.op(OpId::Where, {c.op(OpId::Lt, {x, c.scalarLike(x, 0)}), negative, x}));
}

void selu(NodeContext& c) {
  ir::Value* x = x0(c);
  const double alpha = c.floatAttr("alpha", 1.67326319217681884765625f);
  const double gamma = c.floatAttr("gamma", 1.05070102214813232421875f);
  ir::Value* negative =
      c.op(OpId::Sub, {c.op(OpId::Mul, {c.scalarLike(x, alpha), c.op(OpId::Exp, {x})}), c.scalarLike(x, alpha)});
  ir::Value* y = c.op(OpId::Where, {c.op(OpId::Le, {x, c.scalarLike(x, 0)}), negative, x});
  c.setOutput(0, c.op(OpId::Mul, {y, c.scalarLike(x, gamma)}));
}

void leakyRelu(NodeContext& c) {
  ir::Value* x = x0(c);
  ir::Value* scaled = c.op(OpId::Mul, {x, c.scalarLike(x, c.floatAttr("alpha", 0.01f))});
  c.setOutput(0, c.op(OpId::Where, {c.op(OpId::Lt, {x, c.scalarLike(x, 0)}), scaled, x}));
}

void prelu(NodeContext& c) {
  ir::Value* x = x0(c);
  ir::Value* slope = c.required(1);
  // Before opset 7 a 1-D slope of size C is per channel (dim 1), not
  // broadcast NumPy's way.
  if (c.opset < 7 && slope->type.rank() == 1 && x->type.rank() >= 2 && !slope->type.shape[0].isStatic(1) &&
      slope->type.shape[0] == x->type.shape[1]) {
    slope = c.withTrailingOnes(slope, x->type.rank() - 2);
  }
  ir::Value* scaled = c.op(OpId::Mul, {x, slope});
  c.setOutput(0, c.op(OpId::Where, {c.op(OpId::Lt, {x, c.scalarLike(x, 0)}), scaled, x}));
}

void thresholdedRelu(NodeContext& c) {
  ir::Value* x = x0(c);
  ir::Value* keep = c.op(OpId::Gt, {x, c.scalarLike(x, c.floatAttr("alpha", 1.0f))});
  c.setOutput(0, c.op(OpId::Where, {keep, x, c.scalarLike(x, 0)}));
}

ir::AttrMap unitInterval() {
  ir::AttrMap a;
  a.set("min", ir::Attribute::ofFloat(0));
  a.set("max", ir::Attribute::ofFloat(1));
  return a;
}

void hardSigmoid(NodeContext& c) {
  ir::Value* x = x0(c);
  ir::Value* line = c.op(OpId::Add, {c.op(OpId::Mul, {x, c.scalarLike(x, c.floatAttr("alpha", 0.2f))}),
                                     c.scalarLike(x, c.floatAttr("beta", 0.5f))});
  c.setOutput(0, c.op(OpId::Clamp, {line}, unitInterval()));
}

void hardSwish(NodeContext& c) {
  ir::Value* x = x0(c);
  ir::Value* line = c.op(OpId::Add, {c.op(OpId::Mul, {x, c.scalarLike(x, 1.0 / 6.0)}), c.scalarLike(x, 0.5)});
  c.setOutput(0, c.op(OpId::Mul, {x, c.op(OpId::Clamp, {line}, unitInterval())}));
}

/// log(1 + exp(x)) as relu(x) + log(1 + exp(-|x|)), which does not
/// overflow for large x.
ir::Value* softplusOf(NodeContext& c, ir::Value* x) {
  ir::Value* tail = c.op(OpId::Exp, {c.op(OpId::Neg, {c.op(OpId::Abs, {x})})});
  return c.op(OpId::Add, {c.op(OpId::Relu, {x}), c.op(OpId::Log, {c.op(OpId::Add, {tail, c.scalarLike(x, 1)})})});
}

void softplus(NodeContext& c) { c.setOutput(0, softplusOf(c, x0(c))); }

void softsign(NodeContext& c) {
  ir::Value* x = x0(c);
  c.setOutput(0, c.op(OpId::Div, {x, c.op(OpId::Add, {c.op(OpId::Abs, {x}), c.scalarLike(x, 1)})}));
}

void mish(NodeContext& c) {
  ir::Value* x = x0(c);
  c.setOutput(0, c.op(OpId::Mul, {x, c.op(OpId::Tanh, {softplusOf(c, x)})}));
}

void celu(NodeContext& c) {
  ir::Value* x = x0(c);
  const double alpha = c.floatAttr("alpha", 1.0f);
  ir::Value* expm1 =
      c.op(OpId::Sub, {c.op(OpId::Exp, {c.op(OpId::Div, {x, c.scalarLike(x, alpha)})}), c.scalarLike(x, 1)});
  ir::Value* negative = c.op(OpId::Minimum, {c.scalarLike(x, 0), c.op(OpId::Mul, {c.scalarLike(x, alpha), expm1})});
  c.setOutput(0, c.op(OpId::Add, {c.op(OpId::Relu, {x}), negative}));
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
void shrink(NodeContext& c) {
  ir::Value* x = c.required(0);
  const double lambd = c.floatAttr("lambd", 0.5f), bias = c.floatAttr("bias", 0);
  ir::Value* zero = c.scalarLike(x, 0);
  ir::Value* low = c.op(OpId::Add, {x, c.scalarLike(x, bias)});
  ir::Value* high = c.op(OpId::Sub, {x, c.scalarLike(x, bias)});
  ir::Value* y = c.op(OpId::Where, {c.op(OpId::Gt, {x, c.scalarLike(x, lambd)}), high, zero});
  c.setOutput(0, c.op(OpId::Where, {c.op(OpId::Lt, {x, c.scalarLike(x, -lambd)}), low, y}));
}

void gelu(NodeContext& c) {
  ir::Value* x = x0(c);
  const std::string approximate = c.stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    c.fail(fmt::format("attribute 'approximate' must be \"none\" or \"tanh\", got \"{}\"", approximate));
  c.setOutput(0, c.op(OpId::Gelu, {x}, oneAttr("approximate", ir::Attribute::ofString(approximate))));
}

const OpMapping kOps[] = {
    {"Abs", unary<OpId::Abs>, {}},
    {"Neg", unary<OpId::Neg>, {}},
    {"Relu", unary<OpId::Relu>, {}},
    {"Exp", unaryFloat<OpId::Exp>, {}},
    {"Log", unaryFloat<OpId::Log>, {}},
    {"Sqrt", unaryFloat<OpId::Sqrt>, {}},
    {"Sin", unaryFloat<OpId::Sin>, {}},
    {"Cos", unaryFloat<OpId::Cos>, {}},
    {"Tan", unaryFloat<OpId::Tan>, {}},
    {"Asin", unaryFloat<OpId::Asin>, {}},
    {"Acos", unaryFloat<OpId::Acos>, {}},
    {"Atan", unaryFloat<OpId::Atan>, {}},
    {"Tanh", unaryFloat<OpId::Tanh>, {}},
    {"Sigmoid", unaryFloat<OpId::Sigmoid>, {}},
    {"Erf", unaryFloat<OpId::Erf>, {}},
    {"Reciprocal", unaryFloat<OpId::Reciprocal>, {}},
    {"Floor", unaryFloat<OpId::Floor>, {}},
    {"Ceil", unaryFloat<OpId::Ceil>, {}},
    {"Round", unaryFloat<OpId::Round>, {}},
    {"Sign", unary<OpId::Sign>, {}},
    {"IsNaN", isNaN, {}},
    {"IsInf", isInf, {"detect_positive", "detect_negative"}},
    {"Not", logicalNot, {}},
    {"Add", binary<OpId::Add>, {"broadcast", "axis"}},
    {"Sub", binary<OpId::Sub>, {"broadcast", "axis"}},
    {"Mul", binary<OpId::Mul>, {"broadcast", "axis"}},
    {"Div", div, {"broadcast", "axis"}},
    {"Mod", mod, {"fmod"}},
    {"Pow", pow, {"broadcast", "axis"}},
    {"Equal", binary<OpId::Eq>, {"broadcast", "axis"}},
    {"Greater", binary<OpId::Gt>, {"broadcast", "axis"}},
    {"GreaterOrEqual", binary<OpId::Ge>, {}},
    {"Less", binary<OpId::Lt>, {"broadcast", "axis"}},
    {"LessOrEqual", binary<OpId::Le>, {}},
    {"And", binary<OpId::LogicalAnd>, {"broadcast", "axis"}},
    {"Or", binary<OpId::LogicalOr>, {"broadcast", "axis"}},
    {"Xor", xorOp, {"broadcast", "axis"}},
    {"Sinh", unaryFloat<OpId::Sinh>, {}},
    {"Cosh", unaryFloat<OpId::Cosh>, {}},
    {"Asinh", unaryFloat<OpId::Asinh>, {}},
    {"Acosh", unaryFloat<OpId::Acosh>, {}},
    {"Atanh", unaryFloat<OpId::Atanh>, {}},
    {"Shrink", shrink, {"lambd", "bias"}},
    {"Max", variadic<OpId::Maximum>, {}},
    {"Min", variadic<OpId::Minimum>, {}},
    {"Sum", variadic<OpId::Add>, {}},
    {"Mean", mean, {}},
    {"Where", where, {}},
    {"Cast", cast, {"to", "saturate"}},
    {"CastLike", castLike, {"saturate"}},
    {"Clip", clip, {"min", "max"}},
    {"Elu", elu, {"alpha"}},
    {"Selu", selu, {"alpha", "gamma"}},
    {"LeakyRelu", leakyRelu, {"alpha"}},
    {"PRelu", prelu, {}},
    {"ThresholdedRelu", thresholdedRelu, {"alpha"}},
    {"HardSigmoid", hardSigmoid, {"alpha", "beta"}},
    {"HardSwish", hardSwish, {}},
    {"Softplus", softplus, {}},
    {"Softsign", softsign, {}},
    {"Mish", mish, {}},
    {"Celu", celu, {"alpha"}},
    {"Gelu", gelu, {"approximate"}},
};

}  // namespace

std::span<const OpMapping> elementwiseOps() { return kOps; }

}  // namespace graphc::frontend::onnximport
