#include "ir/Type.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <numeric>

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

namespace {

// A size as a polynomial: Σ coefficient · Π symbols, the monomials keyed by
// their sorted symbols (the empty key is the constant). Every Dim is made
// from one (toDim), so equal sizes have one text.
using Monomial = std::vector<std::string>;
using Polynomial = std::map<Monomial, int64_t>;

std::optional<Polynomial> addTo(Polynomial p, const Polynomial& q, int64_t sign) {
  for (const auto& [m, c] : q) {
    std::optional<int64_t> term = mulSizes(c, sign);
    std::optional<int64_t> sum = term ? addSizes(p[m], *term) : std::nullopt;
    if (!sum) return std::nullopt;
    p[m] = *sum;
  }
  std::erase_if(p, [](const auto& kv) { return kv.second == 0; });
  return p;
}

std::optional<Polynomial> times(const Polynomial& p, const Polynomial& q) {
  Polynomial out;
  for (const auto& [mp, cp] : p)
    for (const auto& [mq, cq] : q) {
      Monomial m = mp;
      m.insert(m.end(), mq.begin(), mq.end());
      std::sort(m.begin(), m.end());
      std::optional<int64_t> c = mulSizes(cp, cq);
      std::optional<int64_t> sum = c ? addSizes(out[m], *c) : std::nullopt;
      if (!sum) return std::nullopt;
      out[m] = *sum;
    }
  std::erase_if(out, [](const auto& kv) { return kv.second == 0; });
  return out;
}

bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

/// Reads a size's text: product := factor ('*' factor)*; factor := INTEGER
/// | NAME | '(' sum ')'; sum := ['+'|'-'] product (('+'|'-') product)*.
class SizeText {
 public:
  explicit SizeText(std::string_view text) : text_(text) {}

  std::optional<Polynomial> whole() {
    std::optional<Polynomial> p = product();
    return p && at_ == text_.size() ? p : std::nullopt;
  }

  std::optional<Polynomial> sum() {
    int64_t sign = 1;
    if (accept('-'))
      sign = -1;
    else
      accept('+');
    std::optional<Polynomial> total = Polynomial{};
    for (;;) {
      std::optional<Polynomial> term = product();
      if (!term || !(total = addTo(*total, *term, sign))) return std::nullopt;
      if (accept('+'))
        sign = 1;
      else if (accept('-'))
        sign = -1;
      else
        return total;
    }
  }

 private:
  bool accept(char c) {
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }

  std::optional<Polynomial> product() {
    std::optional<Polynomial> p = factor();
    while (p && accept('*')) {
      std::optional<Polynomial> q = factor();
      p = q ? times(*p, *q) : std::nullopt;
    }
    return p;
  }

  std::optional<Polynomial> factor() {
    if (at_ >= text_.size()) return std::nullopt;
    if (accept('(')) {
      std::optional<Polynomial> inner = sum();
      return inner && accept(')') ? inner : std::nullopt;
    }
    const size_t start = at_;
    if (std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
      int64_t v = 0;
      const auto [end, error] = std::from_chars(text_.data() + start, text_.data() + at_, v);
      if (error != std::errc() || end != text_.data() + at_) return std::nullopt;
      return v == 0 ? Polynomial{} : Polynomial{{{}, v}};
    }
    if (!std::isalpha(static_cast<unsigned char>(text_[at_])) && text_[at_] != '_') return std::nullopt;
    while (at_ < text_.size() && isNameChar(text_[at_])) ++at_;
    return Polynomial{{{std::string(text_.substr(start, at_ - start))}, 1}};
  }

  std::string_view text_;
  size_t at_ = 0;
};

std::optional<Polynomial> polynomialOf(const Dim& d) {
  if (d.isStatic()) return d.size == 0 ? Polynomial{} : Polynomial{{{}, d.size}};
  std::optional<Polynomial> p = SizeText(d.symbol).whole();
  return p ? times(*p, Polynomial{{{}, d.size}}) : std::nullopt;
}

std::string monomialText(const Monomial& m, int64_t c) {
  std::string symbols = fmt::format("{}", fmt::join(m, "*"));
  if (m.empty()) return std::to_string(c);
  return c == 1 ? symbols : fmt::format("{}*{}", c, symbols);
}

/// The canonical Dim of a polynomial; nullopt when it is negative whatever
/// its symbols (a constant below 0, or no positive coefficient).
std::optional<Dim> toDim(const Polynomial& p) {
  if (p.empty()) return Dim::of(0);
  if (p.size() == 1) {
    const auto& [m, c] = *p.begin();
    if (c < 0) return std::nullopt;
    return m.empty() ? Dim::of(c) : Dim{c, fmt::format("{}", fmt::join(m, "*"))};
  }
  int64_t common = 0;
  bool positive = false;
  for (const auto& [m, c] : p) {
    common = std::gcd(common, c);
    positive = positive || c > 0;
  }
  if (!positive) return std::nullopt;
  // Terms in the map's order (monomials sorted), the constant (the empty
  // monomial, first in the map) last.
  std::string text;
  auto append = [&](const Monomial& m, int64_t c) {
    c /= common;
    text += c < 0 ? "-" : text.empty() ? "" : "+";
    text += monomialText(m, c < 0 ? -c : c);
  };
  for (const auto& [m, c] : p)
    if (!m.empty()) append(m, c);
  if (auto it = p.find(Monomial{}); it != p.end()) append(it->first, it->second);
  return Dim{common, "(" + text + ")"};
}

std::optional<int64_t> valueOf(const Polynomial& p, const SymbolBindings& bindings) {
  int64_t total = 0;
  for (const auto& [m, c] : p) {
    std::optional<int64_t> term = c;
    for (const std::string& s : m) {
      auto it = bindings.find(s);
      if (it == bindings.end()) return std::nullopt;
      term = mulSizes(*term, it->second);
      if (!term) return std::nullopt;
    }
    std::optional<int64_t> sum = addSizes(total, *term);
    if (!sum) return std::nullopt;
    total = *sum;
  }
  return total;
}

}  // namespace

Dim Dim::product(int64_t factor, std::vector<std::string> symbols) {
  if (symbols.empty()) return of(factor);
  std::sort(symbols.begin(), symbols.end());
  return Dim{factor, fmt::format("{}", fmt::join(symbols, "*"))};
}

std::vector<std::string> Dim::factors() const {
  std::vector<std::string> out;
  if (symbol.empty()) return out;
  if (symbol.front() == '(') return {symbol};
  size_t start = 0;
  for (size_t star; (star = symbol.find('*', start)) != std::string::npos; start = star + 1)
    out.push_back(symbol.substr(start, star - start));
  out.push_back(symbol.substr(start));
  return out;
}

std::optional<Dim> multiply(const Dim& a, const Dim& b) {
  if (a.isStatic(0) || b.isStatic(0)) return Dim::of(0);  // a static 0 times anything
  std::optional<Polynomial> p = polynomialOf(a), q = polynomialOf(b);
  std::optional<Polynomial> r = p && q ? times(*p, *q) : std::nullopt;
  return r ? toDim(*r) : std::nullopt;
}

std::optional<Dim> divide(const Dim& a, const Dim& b) {
  std::optional<Polynomial> p = polynomialOf(a), q = polynomialOf(b);
  if (!p || !q || q->empty()) return std::nullopt;
  if (q->size() == 1) {  // b is one term: divide each of a's by it
    const auto& [mq, cq] = *q->begin();
    Polynomial out;
    for (const auto& [m, c] : *p) {
      if (c % cq != 0) return std::nullopt;
      Monomial rest = m;
      for (const std::string& s : mq) {
        auto it = std::find(rest.begin(), rest.end(), s);
        if (it == rest.end()) return std::nullopt;
        rest.erase(it);
      }
      out[rest] += c / cq;
    }
    return toDim(out);
  }
  // a sum divided by a sum: only a's being an integer multiple of b
  const auto& [m0, c0] = *q->begin();
  auto it = p->find(m0);
  if (it == p->end() || it->second % c0 != 0) return std::nullopt;
  const int64_t k = it->second / c0;
  std::optional<Polynomial> diff = addTo(*p, *q, -k);
  return diff && diff->empty() ? std::optional<Dim>(Dim::of(k)) : std::nullopt;
}

std::optional<Dim> add(const Dim& a, const Dim& b) {
  std::optional<Polynomial> p = polynomialOf(a), q = polynomialOf(b);
  std::optional<Polynomial> r = p && q ? addTo(*p, *q, 1) : std::nullopt;
  return r ? toDim(*r) : std::nullopt;
}

std::optional<Dim> subtract(const Dim& a, const Dim& b) {
  std::optional<Polynomial> p = polynomialOf(a), q = polynomialOf(b);
  std::optional<Polynomial> r = p && q ? addTo(*p, *q, -1) : std::nullopt;
  return r ? toDim(*r) : std::nullopt;
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

std::optional<int64_t> factorValue(std::string_view factor, const SymbolBindings& bindings) {
  if (factor.empty()) return std::nullopt;
  if (factor.front() != '(') {
    auto it = bindings.find(std::string(factor));
    return it == bindings.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  std::optional<Polynomial> p = SizeText(factor).whole();
  std::optional<int64_t> v = p ? valueOf(*p, bindings) : std::nullopt;
  return v && *v >= 0 ? v : std::nullopt;
}

std::vector<std::string> symbolsOf(const Dim& d) {
  std::vector<std::string> out;
  if (std::optional<Polynomial> p = polynomialOf(d))
    for (const auto& [m, c] : *p) out.insert(out.end(), m.begin(), m.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<int64_t> evaluate(const Dim& d, const SymbolBindings& bindings) {
  std::optional<int64_t> v = d.size;
  for (const std::string& f : d.factors()) {
    std::optional<int64_t> x = factorValue(f, bindings);
    if (!x) return std::nullopt;
    v = mulSizes(*v, *x);
    if (!v) return std::nullopt;
  }
  return v;
}

std::optional<Dim> parseDim(std::string_view text) {
  std::optional<Polynomial> p = SizeText(text).whole();
  return p ? toDim(*p) : std::nullopt;
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
    // Bound symbols become their values; unbound ones stay.
    std::optional<Polynomial> p = polynomialOf(d);
    if (!p) continue;
    Polynomial bound;
    bool overflow = false;
    for (const auto& [m, c] : *p) {
      std::optional<int64_t> coefficient = c;
      Monomial rest;
      for (const std::string& s : m) {
        auto it = bindings.find(s);
        if (it == bindings.end())
          rest.push_back(s);
        else if (coefficient)
          coefficient = mulSizes(*coefficient, it->second);
      }
      std::optional<int64_t> sum = coefficient ? addSizes(bound[rest], *coefficient) : std::nullopt;
      if (!sum)
        overflow = true;
      else
        bound[rest] = *sum;
    }
    std::erase_if(bound, [](const auto& kv) { return kv.second == 0; });
    if (overflow) continue;
    if (std::optional<Dim> r = toDim(bound)) d = *r;
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
