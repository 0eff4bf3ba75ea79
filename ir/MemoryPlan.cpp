#include "ir/MemoryPlan.h"

#include <algorithm>

#include <fmt/format.h>

namespace graphc::ir {

Bytes Bytes::constant(int64_t n) {
  Bytes b;
  if (n) b.terms[""] = n;
  return b;
}

Bytes Bytes::operator+(const Bytes& other) const {
  Bytes sum = *this;
  for (const auto& [key, c] : other.terms) sum.terms[key] += c;
  return sum;
}

bool Bytes::fitsIn(const Bytes& other) const {
  for (const auto& [key, c] : terms) {
    auto it = other.terms.find(key);
    if (c > (it == other.terms.end() ? 0 : it->second)) return false;
  }
  return true;
}

bool Bytes::isZero() const {
  for (const auto& [key, c] : terms)
    if (c) return false;
  return true;
}

int64_t Bytes::evaluate(const std::map<std::string, int64_t>& symbols) const {
  int64_t total = 0;
  for (const auto& [key, coefficient] : terms) {
    int64_t term = coefficient;
    for (size_t start = 0; start < key.size();) {  // key: "B*S"
      size_t star = std::min(key.find('*', start), key.size());
      term *= symbols.at(key.substr(start, star - start));
      start = star + 1;
    }
    total += term;
  }
  return total;
}

std::string Bytes::str() const {
  std::string out;
  // Symbolic terms first, largest first in key order; the constant last.
  for (auto it = terms.rbegin(); it != terms.rend(); ++it) {
    if (!it->second) continue;
    if (!out.empty()) out += " + ";
    out += it->first.empty() ? std::to_string(it->second)
           : it->second == 1 ? it->first
                             : fmt::format("{}*{}", it->second, it->first);
  }
  return out.empty() ? "0" : out;
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
