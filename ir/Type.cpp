#include "ir/Type.h"

#include <fmt/format.h>

#include "ir/SizeMath.h"

namespace graphc::ir {

bool TensorType::isStatic() const {
  for (const Dim& d : shape)
    if (!d.isStatic()) return false;
  return true;
}

std::optional<int64_t> TensorType::staticNumElements() const {
  std::vector<int64_t> sizes;
  for (const Dim& d : shape) {
    if (!d.isStatic()) return std::nullopt;
    sizes.push_back(d.size);
  }
  // The verifier rejects such a type; until it has run (while a front end
  // builds a graph), the count saturates rather than wraps.
  return productOf(sizes).value_or(INT64_MAX);
}

std::string toString(const Dim& d) { return d.isStatic() ? std::to_string(d.size) : d.symbol; }

std::string toString(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += toString(s[i]);
  }
  return out + "]";
}

std::string toString(const TensorType& t) { return std::string(dtypeName(t.dtype)) + toString(t.shape); }

std::string toString(const std::vector<TensorType>& types) {
  std::string out;
  for (size_t k = 0; k < types.size(); ++k) out += (k ? ", " : "") + toString(types[k]);
  return out;
}

TensorType substitute(const TensorType& t, const SymbolBindings& bindings) {
  TensorType out = t;
  for (Dim& d : out.shape) {
    if (d.isStatic()) continue;
    auto it = bindings.find(d.symbol);
    if (it != bindings.end()) d = Dim::of(it->second);
  }
  return out;
}

Shape staticShape(const std::vector<int64_t>& sizes) {
  Shape s;
  s.reserve(sizes.size());
  for (int64_t n : sizes) s.push_back(Dim::of(n));
  return s;
}

}  // namespace graphc::ir
