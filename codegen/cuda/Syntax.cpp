#include "codegen/cuda/Syntax.h"

#include <cmath>

#include <fmt/format.h>

#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cuda {

int64_t staticExtent(const std::vector<ir::Dim>& dims) {
  int64_t n = 1;
  for (const ir::Dim& d : dims) {
    if (!d.isStatic()) return -1;
    n *= d.size;
  }
  return n;
}

/// The C++ type a value of `t` is computed in.
std::string computeType(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::I8: return "signed char";
    case DType::I32: return "int";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

/// The C++ type a buffer of `t` stores.
std::string storageType(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16: return "unsigned short";
    case DType::Bool: return "unsigned char";
    default: return computeType(t);
  }
}

/// Wraps a computed float of `t` so it holds what `t` holds.
std::string rounded(DType t, const std::string& v) {
  if (t == DType::F16) return "gc::round_f16(" + v + ")";
  if (t == DType::BF16) return "gc::round_bf16(" + v + ")";
  return v;
}

std::string fromStorage(DType t, const std::string& raw) {
  switch (t) {
    case DType::F16: return "gc::f16_to_f32(" + raw + ")";
    case DType::BF16: return "gc::bf16_to_f32(" + raw + ")";
    case DType::Bool: return "(" + raw + " != 0)";
    default: return raw;
  }
}

std::string toStorage(DType t, const std::string& v) {
  switch (t) {
    case DType::F16: return "gc::f32_to_f16(" + v + ")";
    case DType::BF16: return "gc::f32_to_bf16(" + v + ")";
    case DType::Bool: return "(unsigned char)(" + v + ")";
    default: return v;
  }
}

std::string floatLiteral(DType t, double v) {
  const bool f64 = t == DType::F64;
  if (std::isnan(v)) return f64 ? "gc::nan_f64()" : "gc::nan_f32()";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (f64 ? "gc::inf_f64()" : "gc::inf_f32()");
  std::string s = fmt::format("{:.17g}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f64 ? s : s + "f";
}

/// An int64 literal; INT64_MIN has no decimal spelling of type long long.
std::string i64Literal(int64_t v) { return v == INT64_MIN ? "(i64)0x8000000000000000ull" : fmt::format("{}ll", v); }

/// An integer or bool literal of dtype `t`, exact.
std::string intLiteral(DType t, int64_t v) {
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  if (t == DType::I64) return i64Literal(v);
  return fmt::format("({})({})", computeType(t), v);
}

/// A small literal (0 for neg/abs/relu) of any dtype.
std::string literal(DType t, double v) {
  if (ir::isFloat(t)) return floatLiteral(t, runtime::reference::roundTo(t, v));
  return intLiteral(t, static_cast<int64_t>(v));
}

}  // namespace graphc::codegen::cuda
