// Reference kernels of the pointwise ops (unary, binary, where, clamp,
// cast): broadcasting by explicit index maps, float math in f64, integer
// math in wrapping 64-bit arithmetic narrowed to the dtype on store.
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime::reference {

using ir::OpId;

std::vector<int64_t> broadcastIndices(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  const size_t rank = out.size(), offset = out.size() - in.size();
  std::vector<int64_t> inStrides = contiguousStrides(in);
  std::vector<int64_t> stride(rank, 0);
  for (size_t k = offset; k < rank; ++k) stride[k] = in[k - offset] == 1 ? 0 : inStrides[k - offset];
  std::vector<int64_t> indices(static_cast<size_t>(checkedNumel(out)));
  forEachStrided(out, stride, 0, [&](int64_t i, int64_t src) { indices[static_cast<size_t>(i)] = src; });
  return indices;
}

namespace {

double geluExact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); }
double geluTanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// NaN-propagating max/min, as torch.maximum/minimum.
double fmaxNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double fminNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

double unaryFloat(ir::OpId op, const ir::AttrMap& attrs, double x) {
  switch (op) {
    case OpId::Neg: return -x;
    case OpId::Abs: return std::fabs(x);
    case OpId::Exp: return std::exp(x);
    case OpId::Log: return std::log(x);
    case OpId::Sqrt: return std::sqrt(x);
    case OpId::Rsqrt: return 1.0 / std::sqrt(x);
    case OpId::Sin: return std::sin(x);
    case OpId::Cos: return std::cos(x);
    case OpId::Tanh: return std::tanh(x);
    case OpId::Sigmoid: return sigmoid(x);
    case OpId::Relu: return std::isnan(x) ? x : (x > 0 ? x : 0.0);
    case OpId::Gelu: {
      const ir::Attribute* a = attrs.find("approximate");
      return a && a->s == "tanh" ? geluTanh(x) : geluExact(x);
    }
    case OpId::Silu: return x * sigmoid(x);
    case OpId::Erf: return std::erf(x);
    case OpId::Reciprocal: return 1.0 / x;
    case OpId::Floor: return std::floor(x);
    case OpId::Ceil: return std::ceil(x);
    case OpId::Round: return std::nearbyint(x);  // half to even, as torch.round
    case OpId::Trunc: return std::trunc(x);
    case OpId::Tan: return std::tan(x);
    case OpId::Asin: return std::asin(x);
    case OpId::Acos: return std::acos(x);
    case OpId::Atan: return std::atan(x);
    case OpId::Sinh: return std::sinh(x);
    case OpId::Cosh: return std::cosh(x);
    case OpId::Asinh: return std::asinh(x);
    case OpId::Acosh: return std::acosh(x);
    case OpId::Atanh: return std::atanh(x);
    case OpId::Expm1: return std::expm1(x);
    case OpId::Log1p: return std::log1p(x);
    case OpId::Log2: return std::log2(x);
    case OpId::Log10: return std::log10(x);
    case OpId::Sign: return (x > 0) - (x < 0);  // 0 for ±0 and NaN, as torch.sign
    default: throw ir::Error("reference: no float kernel for unary op");
  }
}

int64_t wrapNeg(int64_t x) { return static_cast<int64_t>(0ULL - static_cast<uint64_t>(x)); }

int64_t unaryInt(OpId op, int64_t x) {
  switch (op) {
    case OpId::Neg: return wrapNeg(x);
    case OpId::Abs: return x < 0 ? wrapNeg(x) : x;
    case OpId::Relu: return x > 0 ? x : 0;
    case OpId::Sign: return (x > 0) - (x < 0);
    default: throw ir::Error("reference: no integer kernel for unary op");
  }
}

/// torch.remainder: the remainder with the divisor's sign (Python's %).
double remainderFloat(double a, double b) {
  const double r = std::fmod(a, b);
  return r != 0 && (b < 0) != (r < 0) ? r + b : r;
}

/// torch.floor_divide on floats, as c10::div_floor_floating computes it:
/// the quotient from the exact remainder, so that floor(a / b) is not
/// thrown off by the rounding of a / b.
double floorDivideFloat(double a, double b) {
  if (b == 0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double floored = std::floor(div);
  if (div - floored > 0.5) floored += 1;
  return floored;
}

double binaryFloat(OpId op, double a, double b) {
  switch (op) {
    case OpId::Add: return a + b;
    case OpId::Sub: return a - b;
    case OpId::Mul: return a * b;
    case OpId::Div: return a / b;
    case OpId::Pow: return std::pow(a, b);
    case OpId::Maximum: return fmaxNan(a, b);
    case OpId::Minimum: return fminNan(a, b);
    case OpId::Atan2: return std::atan2(a, b);
    case OpId::Fmod: return std::fmod(a, b);
    case OpId::Remainder: return remainderFloat(a, b);
    case OpId::FloorDivide: return floorDivideFloat(a, b);
    default: throw ir::Error("reference: no float kernel for binary op");
  }
}

int64_t binaryInt(const ir::Node& n, int64_t a, int64_t b) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (n.op) {  // unsigned arithmetic wraps instead of overflowing
    case OpId::Add: return static_cast<int64_t>(ua + ub);
    case OpId::Sub: return static_cast<int64_t>(ua - ub);
    case OpId::Mul: return static_cast<int64_t>(ua * ub);
    case OpId::Maximum: return std::max(a, b);
    case OpId::Minimum: return std::min(a, b);
    case OpId::Fmod:
    case OpId::Remainder:
    case OpId::FloorDivide:
      // torch raises ZeroDivisionError; compiled kernels give 0 (docs/language.md).
      if (b == 0) throw ir::LocatedError(n.loc, fmt::format("'{}': integer division by zero", n.name()));
      return divideIntegers(n.op, a, b);
    default: throw ir::Error("reference: no integer kernel for binary op");
  }
}

template <typename T>
bool comparison(OpId op, T a, T b) {
  switch (op) {
    case OpId::Eq: return a == b;
    case OpId::Ne: return a != b;
    case OpId::Lt: return a < b;
    case OpId::Le: return a <= b;
    case OpId::Gt: return a > b;
    case OpId::Ge: return a >= b;
    case OpId::LogicalAnd: return a != T(0) && b != T(0);
    case OpId::LogicalOr: return a != T(0) || b != T(0);
    default: throw ir::Error("reference: not a comparison");
  }
}

Tensor castTensor(const Tensor& x, ir::DType to) {
  Tensor out(to, x.shape());
  const bool exactInts = !ir::isFloat(x.dtype()) && !ir::isFloat(to);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (exactInts)
      out.setInt(i, x.getInt(i));
    else
      out.setDouble(i, x.getDouble(i));
  }
  return out;
}

}  // namespace

int64_t divideIntegers(OpId op, int64_t a, int64_t b) {
  const int64_t quotient = b == -1 ? wrapNeg(a) : a / b;
  const int64_t remainder = b == -1 ? 0 : a % b;
  const bool signsDiffer = remainder != 0 && (remainder < 0) != (b < 0);
  switch (op) {
    case OpId::Fmod: return remainder;
    case OpId::Remainder: return signsDiffer ? remainder + b : remainder;
    case OpId::FloorDivide: return signsDiffer ? quotient - 1 : quotient;
    default: throw ir::Error("reference: not an integer division");
  }
}

double roundTo(ir::DType t, double v) {
  Tensor scalar(t, {});
  scalar.setDouble(0, v);
  return scalar.getDouble(0);
}

double pointwiseScalar(OpId op, const ir::AttrMap& attrs, const std::vector<double>& args) {
  const ir::OpInfo& info = ir::opInfo(op);
  switch (op) {
    case OpId::Cast: return roundTo(attrs.find("dtype")->dtype, args[0]);
    case OpId::LogicalNot: return args[0] == 0;
    case OpId::Where: return args[0] != 0 ? args[1] : args[2];
    case OpId::Clamp: {
      double v = args[0];
      if (const ir::Attribute* lo = attrs.find("min")) v = fmaxNan(v, lo->asDouble());
      if (const ir::Attribute* hi = attrs.find("max")) v = fminNan(v, hi->asDouble());
      return v;
    }
    default: break;
  }
  if (info.category == ir::OpCategory::Unary) return unaryFloat(op, attrs, args[0]);
  switch (op) {
    case OpId::Eq:
    case OpId::Ne:
    case OpId::Lt:
    case OpId::Le:
    case OpId::Gt:
    case OpId::Ge:
    case OpId::LogicalAnd:
    case OpId::LogicalOr: return comparison(op, args[0], args[1]);
    default: break;
  }
  return binaryFloat(op, args[0], args[1]);
}

Tensor pointwise(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape) {
  const ir::DType resultType = n.result()->type.dtype;
  if (n.op == OpId::Cast) return castTensor(operands[0], resultType);

  std::vector<std::vector<int64_t>> index;
  for (const Tensor& t : operands) index.push_back(broadcastIndices(shape, t.shape()));
  Tensor out(resultType, shape);
  const int64_t count = out.numel();
  auto at = [&](size_t k, int64_t i) { return index[k][static_cast<size_t>(i)]; };
  const ir::OpCategory category = n.info().category;
  const ir::DType operandType = operands[n.op == OpId::Where ? 1 : 0].dtype();
  const bool floatMath = ir::isFloat(operandType);

  if (n.op == OpId::LogicalNot) {
    for (int64_t i = 0; i < count; ++i) out.setInt(i, operands[0].getDouble(at(0, i)) == 0);
  } else if (n.op == OpId::Where) {
    for (int64_t i = 0; i < count; ++i) {
      size_t pick = operands[0].getInt(at(0, i)) ? 1 : 2;
      if (floatMath)
        out.setDouble(i, operands[pick].getDouble(at(pick, i)));
      else
        out.setInt(i, operands[pick].getInt(at(pick, i)));
    }
  } else if (n.op == OpId::Clamp) {
    const ir::Attribute* lo = n.attrs.find("min");
    const ir::Attribute* hi = n.attrs.find("max");
    for (int64_t i = 0; i < count; ++i) {
      if (floatMath) {  // as torch.clamp: min first, then max; NaN stays
        double v = operands[0].getDouble(at(0, i));
        if (lo) v = fmaxNan(v, lo->asDouble());
        if (hi) v = fminNan(v, hi->asDouble());
        out.setDouble(i, v);
      } else {
        int64_t v = operands[0].getInt(at(0, i));
        if (lo) v = std::max(v, lo->i);
        if (hi) v = std::min(v, hi->i);
        out.setInt(i, v);
      }
    }
  } else if (category == ir::OpCategory::Unary) {
    for (int64_t i = 0; i < count; ++i) {
      if (floatMath)
        out.setDouble(i, unaryFloat(n.op, n.attrs, operands[0].getDouble(at(0, i))));
      else
        out.setInt(i, unaryInt(n.op, operands[0].getInt(at(0, i))));
    }
  } else if (resultType == ir::DType::Bool) {  // comparisons and logical ops
    for (int64_t i = 0; i < count; ++i) {
      bool r = floatMath ? comparison(n.op, operands[0].getDouble(at(0, i)), operands[1].getDouble(at(1, i)))
                         : comparison(n.op, operands[0].getInt(at(0, i)), operands[1].getInt(at(1, i)));
      out.setInt(i, r);
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      if (floatMath)
        out.setDouble(i, binaryFloat(n.op, operands[0].getDouble(at(0, i)), operands[1].getDouble(at(1, i))));
      else
        out.setInt(i, binaryInt(n, operands[0].getInt(at(0, i)), operands[1].getInt(at(1, i))));
    }
  }
  return out;
}

}  // namespace graphc::runtime::reference
