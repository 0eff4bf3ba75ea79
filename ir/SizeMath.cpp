#include "ir/SizeMath.h"

#include <fmt/format.h>

#include "ir/Diagnostics.h"

namespace graphc::ir {

std::optional<int64_t> mulSizes(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> addSizes(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> productOf(std::span<const int64_t> sizes) {
  int64_t n = 1;
  for (int64_t d : sizes)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

std::optional<int64_t> bytesOf(DType t, std::span<const int64_t> shape) {
  std::optional<int64_t> n = productOf(shape);
  return n ? mulSizes(*n, dtypeSize(t)) : std::nullopt;
}

int64_t checkedMul(int64_t a, int64_t b, std::string_view what) {
  if (std::optional<int64_t> r = mulSizes(a, b)) return *r;
  throw Error(fmt::format("{} overflows int64 ({} * {})", what, a, b));
}

int64_t checkedAdd(int64_t a, int64_t b, std::string_view what) {
  if (std::optional<int64_t> r = addSizes(a, b)) return *r;
  throw Error(fmt::format("{} overflows int64 ({} + {})", what, a, b));
}

std::optional<int64_t> alignUp(int64_t n, int64_t align) {
  std::optional<int64_t> r = addSizes(n, align - 1);
  if (!r) return std::nullopt;
  return *r / align * align;
}

int64_t checkedValue(const Dim& d, const SymbolBindings& sizes, std::string_view what) {
  int64_t v = d.size;
  for (const std::string& f : d.factors()) {
    std::optional<int64_t> x = factorValue(f, sizes);
    if (!x) {
      for (const std::string& s : symbolsOf(Dim{1, f}))
        if (!sizes.count(s)) throw Error(fmt::format("{}: symbolic size '{}' has no value", what, s));
      throw Error(fmt::format("{}: the size {} is negative or overflows int64 for these sizes", what, f));
    }
    v = checkedMul(v, *x, what);
  }
  return v;
}

int64_t checkedExtent(const std::vector<Dim>& dims, const SymbolBindings& sizes, std::string_view what) {
  int64_t n = 1;
  for (const Dim& d : dims) n = checkedMul(n, checkedValue(d, sizes, what), what);
  return n;
}

}  // namespace graphc::ir
