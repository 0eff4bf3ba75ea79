#include "ir/Type.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

Dim Dim::product(int64_t factor, std::vector<std::string> symbols) {
  if (symbols.empty()) return of(factor);
  std::sort(symbols.begin(), symbols.end());
  return Dim{factor, fmt::format("{}", fmt::join(symbols, "*"))};
}

std::vector<std::string> Dim::factors() const {
  std::vector<std::string> out;
  if (symbol.empty()) return out;
  size_t start = 0;
  for (size_t star; (star = symbol.find('*', start)) != std::string::npos; start = star + 1)
    out.push_back(symbol.substr(start, star - start));
  out.push_back(symbol.substr(start));
  return out;
}

std::optional<Dim> multiply(const Dim& a, const Dim& b) {
  std::optional<int64_t> factor = mulSizes(a.size, b.size);
  if (!factor) return std::nullopt;
  if (*factor == 0) return Dim::of(0);  // a static 0 times anything
  std::vector<std::string> symbols = a.factors(), more = b.factors();
  symbols.insert(symbols.end(), more.begin(), more.end());
  return Dim::product(*factor, std::move(symbols));
}

std::optional<Dim> divide(const Dim& a, const Dim& b) {
  if (b.size == 0 || a.size % b.size != 0) return std::nullopt;
  std::vector<std::string> rest = a.factors();
  for (const std::string& f : b.factors()) {
    auto it = std::find(rest.begin(), rest.end(), f);
    if (it == rest.end()) return std::nullopt;
    rest.erase(it);
  }
  return Dim::product(a.size / b.size, std::move(rest));
}

std::optional<Dim> numElements(const Shape& s) {
  Dim n = Dim::of(1);
  for (const Dim& d : s) {
    std::optional<Dim> next = multiply(n, d);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

std::optional<int64_t> evaluate(const Dim& d, const SymbolBindings& bindings) {
  std::optional<int64_t> v = d.size;
  for (const std::string& f : d.factors()) {
    auto it = bindings.find(f);
    if (it == bindings.end()) return std::nullopt;
    v = mulSizes(*v, it->second);
    if (!v) return std::nullopt;
  }
  return v;
}

std::optional<Dim> parseDim(std::string_view text) {
  int64_t factor = 1;
  std::vector<std::string> symbols;
  bool any = false;
  for (size_t start = 0; start <= text.size();) {
    size_t star = text.find('*', start);
    if (star == std::string_view::npos) star = text.size();
    const std::string_view part = text.substr(start, star - start);
    if (part.empty()) return std::nullopt;
    if (std::isdigit(static_cast<unsigned char>(part[0]))) {
      int64_t v = 0;
      const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), v);
      if (error != std::errc() || end != part.data() + part.size()) return std::nullopt;
      std::optional<int64_t> f = mulSizes(factor, v);
      if (!f) return std::nullopt;
      factor = *f;
    } else {
      for (char c : part)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return std::nullopt;
      symbols.emplace_back(part);
    }
    any = true;
    start = star + 1;
  }
  if (!any) return std::nullopt;
  return Dim::product(factor, std::move(symbols));
}

std::string toString(const Dim& d) {
  if (d.isStatic()) return std::to_string(d.size);
  return d.size == 1 ? d.symbol : fmt::format("{}*{}", d.size, d.symbol);
}

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
    // Bound symbols join the constant factor; unbound ones stay.
    std::optional<int64_t> factor = d.size;
    std::vector<std::string> rest;
    for (const std::string& f : d.factors()) {
      auto it = bindings.find(f);
      if (it == bindings.end())
        rest.push_back(f);
      else if (factor)
        factor = mulSizes(*factor, it->second);
    }
    if (factor) d = Dim::product(*factor, std::move(rest));
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
