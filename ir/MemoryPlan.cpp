#include "ir/MemoryPlan.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "ir/SizeMath.h"

namespace graphc::ir {

namespace {
std::string bindingsText(const SymbolBindings& sizes) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : sizes) parts.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string product(int64_t coefficient, const std::vector<std::string>& symbols) {
  if (symbols.empty()) return std::to_string(coefficient);
  std::string key = fmt::format("{}", fmt::join(symbols, "*"));
  return coefficient == 1 ? key : fmt::format("{}*{}", coefficient, key);
}
}  // namespace

Bytes Bytes::of(const TensorType& t) {
  Bytes b{dtypeSize(t.dtype), {}};
  for (const Dim& d : t.shape) {
    if (!d.isStatic()) {
      b.symbols.push_back(d.symbol);
    } else if (std::optional<int64_t> n = mulSizes(b.coefficient, d.size)) {
      b.coefficient = *n;
    } else {
      throw Error(fmt::format("type {} is too large: its byte count overflows int64", toString(t)));
    }
  }
  std::sort(b.symbols.begin(), b.symbols.end());
  if (b.coefficient == 0) b.symbols.clear();
  return b;
}

bool Bytes::fitsIn(const Bytes& capacity) const {
  if (coefficient == 0) return true;
  return symbols == capacity.symbols && coefficient <= capacity.coefficient;
}

int64_t Bytes::evaluate(const SymbolBindings& sizes) const {
  int64_t n = coefficient;
  for (const std::string& s : symbols) {
    std::optional<int64_t> next = mulSizes(n, sizes.at(s));
    if (!next)
      throw Error(fmt::format("the buffer of {} bytes overflows int64 for {}", str(), bindingsText(sizes)));
    n = *next;
  }
  return n;
}

std::string Bytes::str() const { return product(coefficient, symbols); }

ArenaOffset ArenaOffset::operator+(const Bytes& size) const {
  ArenaOffset sum = *this;
  sum.pieces.push_back(size);
  return sum;
}

int64_t ArenaOffset::evaluate(const SymbolBindings& sizes) const {
  int64_t total = 0;
  for (const Bytes& piece : pieces) {
    std::optional<int64_t> aligned = alignUp(piece.evaluate(sizes), kArenaAlignment);
    std::optional<int64_t> next = aligned ? addSizes(total, *aligned) : std::nullopt;
    if (!next) throw Error(fmt::format("the arena size overflows int64 for {}", bindingsText(sizes)));
    total = *next;
  }
  return total;
}

std::string ArenaOffset::str() const {
  // Pieces whose rounding is known (static sizes, and symbolic ones whose
  // coefficient is a multiple of the alignment) add up as a polynomial.
  std::map<std::vector<std::string>, int64_t> polynomial;
  std::vector<std::string> rounded;
  for (const Bytes& p : pieces) {
    if (p.coefficient == 0) continue;
    if (p.symbols.empty()) polynomial[{}] += *alignUp(p.coefficient, kArenaAlignment);
    else if (p.coefficient % kArenaAlignment == 0) polynomial[p.symbols] += p.coefficient;
    else rounded.push_back(fmt::format("align{}({})", kArenaAlignment, p.str()));
  }
  std::vector<std::string> terms;
  for (auto it = polynomial.rbegin(); it != polynomial.rend(); ++it)  // symbolic terms first, the constant last
    if (!it->first.empty()) terms.push_back(product(it->second, it->first));
  terms.insert(terms.end(), rounded.begin(), rounded.end());
  if (auto c = polynomial.find({}); c != polynomial.end()) terms.push_back(std::to_string(c->second));
  return terms.empty() ? "0" : fmt::format("{}", fmt::join(terms, " + "));
}

std::string describe(const MemoryPlan& plan) {
  std::string out = fmt::format("// memory plan: arena of {} bytes, {} intermediate buffer{}\n", plan.peak.str(),
                                plan.buffers.size(), plan.buffers.size() == 1 ? "" : "s");
  for (const BufferAssignment& b : plan.buffers)
    out += fmt::format("//   {:<10} offset {:<12} size {:<12} live {}..{}{}\n", b.value, b.offset.str(), b.size.str(),
                       b.firstStep, b.lastStep, b.reusedFrom.empty() ? "" : " (in place of " + b.reusedFrom + ")");
  return out;
}

}  // namespace graphc::ir
