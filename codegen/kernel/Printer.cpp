// The kernel IR's text form: each kernel as a loop nest (what `graphc
// compile --emit=kernels` prints and the lit tests check).
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::kernel {

using namespace ir;

std::string constantText(const Expr& e) {
  if (isFloat(e.dtype)) return toString(Attribute::ofFloat(e.value));
  if (e.dtype == DType::Bool) return e.intValue ? "true" : "false";
  return std::to_string(e.intValue);
}

namespace {
std::string boundsText(const Expr& e) {
  std::string s = "inbounds(";
  for (size_t k = 0; k < e.index.size(); ++k)
    s += fmt::format("{}{} < {}", k ? ", " : "", toString(e.index[k]), toString(e.sizes[k]));
  return s + ")";
}
}  // namespace

std::string inlineText(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Load: {
      std::string s = fmt::format("in{}[", e.buffer);
      for (size_t k = 0; k < e.index.size(); ++k) s += (k ? ", " : "") + toString(e.index[k]);
      return s + "]";
    }
    case Expr::Kind::Const: return constantText(e);
    case Expr::Kind::Acc: return "acc";
    case Expr::Kind::InBounds: return boundsText(e);
    case Expr::Kind::IndexValue: return fmt::format("{}({})", dtypeName(e.dtype), toString(e.index[0]));
    case Expr::Kind::Reduce:
    case Expr::Kind::Select:
    case Expr::Kind::Op: {
      std::string s = e.kind == Expr::Kind::Select ? "select" : std::string(opInfo(e.op).name);
      s += "(";
      for (size_t k = 0; k < e.args.size(); ++k) s += (k ? ", " : "") + inlineText(*e.args[k]);
      for (const auto& [name, value] : e.attrs) s += fmt::format(", {}={}", name, toString(value));
      return s + ")";
    }
  }
  return "?";
}

namespace {

/// Prints a kernel as a loop nest. Reductions and values used more than
/// once become temporaries (t0, t1, ...), defined in the outer loop when
/// they depend only on the outer variables and in the inner loop otherwise.
class Printer {
  static constexpr const char* kScores = "scores";

 public:
  explicit Printer(const Kernel& k) : k_(k), outerRank_(static_cast<int64_t>(k.outer.size())) {}

  std::string run() {
    std::string out = fmt::format("kernel {} ({})\n", k_.name, ir::kernelKindName(k_.kind));
    for (const Buffer& b : k_.inputs)
      out += fmt::format("  {}: {}{}\n", b.name, toString(b.type),
                         b.mx ? fmt::format(" as {} [{}, {}]{}", ir::mxFormatInfo(b.mx->format).name, b.mx->rows,
                                            b.mx->cols, b.mx->transposed ? " transposed" : "")
                              : "");
    for (const Buffer& b : k_.outputs) out += fmt::format("  {}: {}\n", b.name, toString(b.type));
    for (const Kernel::MinimumSize& m : k_.minimumSizes)
      out += fmt::format("  requires {} >= {}\n", toString(m.size), m.atLeast);
    if (k_.gemm && k_.gemm->conv && k_.gemm->conv->transposed) {
      const Gemm& g = *k_.gemm;
      const ConvAsGemm& c = *g.conv;
      out += fmt::format(
          "  gemm acc[{}] = col2im(sum i{} in [0, {}): {}[i{}, (channel, kernel point)] * {}[i{}, input position])  "
          "(transposed, in [{}], kernel [{}], stride [{}], dilation [{}], pad [{}])\n",
          list(vars(k_.outer.size())), g.kVar, toString(g.k), k_.inputs[g.a].name, g.kVar, k_.inputs[g.b].name, g.kVar,
          fmt::join(c.in, ", "), fmt::join(c.kernel, ", "), fmt::join(c.stride, ", "), fmt::join(c.dilation, ", "),
          fmt::join(c.padBegin, ", "));
    } else if (k_.gemm && k_.gemm->conv && k_.gemm->conv->pool != PoolKind::None) {
      const Gemm& g = *k_.gemm;
      const ConvAsGemm& c = *g.conv;
      out += fmt::format(
          "  gemm acc[{}] = {}({}) over {} points  (channels {}, in [{}], kernel [{}], stride [{}], dilation [{}], pad "
          "[{}]{})\n",
          list(vars(k_.outer.size())), c.pool == PoolKind::Max ? "max_pool" : "avg_pool", k_.inputs[g.b].name,
          toString(g.k), c.channels, fmt::join(c.in, ", "), fmt::join(c.kernel, ", "), fmt::join(c.stride, ", "),
          fmt::join(c.dilation, ", "), fmt::join(c.padBegin, ", "),
          c.pool == PoolKind::Average
              ? fmt::format(", pad end [{}], count_include_pad {}", fmt::join(c.padEnd, ", "), c.countIncludePad)
              : "");
    } else if (k_.gemm && k_.gemm->conv) {
      const Gemm& g = *k_.gemm;
      const ConvAsGemm& c = *g.conv;
      const Indices outer = vars(k_.outer.size());
      out += fmt::format(
          "  gemm acc[{}] = sum i{} in [0, {}): {}[channel, i{}] * im2col({})[{}i{}, position]  ({}channels {}, in "
          "[{}], kernel [{}], stride [{}], dilation [{}], pad [{}])\n",
          list(outer), g.kVar, toString(g.k), k_.inputs[g.a].name, g.kVar, k_.inputs[g.b].name,
          c.depthwise    ? "channel, "
          : c.groups > 1 ? "group, "
                         : "",
          g.kVar,
          c.depthwise    ? "depthwise, "
          : c.groups > 1 ? fmt::format("groups {}, ", c.groups)
                         : "",
          c.channels, fmt::join(c.in, ", "), fmt::join(c.kernel, ", "), fmt::join(c.stride, ", "),
          fmt::join(c.dilation, ", "), fmt::join(c.padBegin, ", "));
    } else if (k_.gemm) {
      const Gemm& g = *k_.gemm;
      out += fmt::format("  gemm acc[{}] = sum i{} in [0, {}): {}[{}] * {}[{}]\n", list(vars(k_.outer.size())), g.kVar,
                         toString(g.k), k_.inputs[g.a].name, list(g.aIndex), k_.inputs[g.b].name, list(g.bIndex));
    }
    for (const Store& s : k_.stores) countUses(s.value);
    for (const Store& s : k_.stores) {
      const std::string& target = s.buffer == Store::kScores ? kScores : k_.outputs[s.buffer].name;
      std::string line = fmt::format("{}[{}] = {}", target, list(s.index), render(s.value, false));
      (s.insideReduction ? inner_ : outer_).push_back(line);
    }
    out += "  for " + loops(k_.outer, 0) + ":\n";
    for (const std::string& l : outer_) out += "    " + l + "\n";
    if (!inner_.empty()) {
      out += "    for " + loops(k_.reduceSizes, k_.outer.size()) + ":\n";
      for (const std::string& l : inner_) out += "      " + l + "\n";
    }
    if (k_.attention)  // the softmax over the keys (the last loop) and the second GEMM
      out += fmt::format("  {} = {}softmax({} over i{}) * {}\n", k_.outputs[0].name,
                         k_.attention->nanRowsToZero        ? "nan_to_zero_"
                         : k_.attention->minusInfRowsToZero ? "masked_to_zero_"
                                                            : "",
                         kScores, k_.outer.size() - 1, k_.inputs[k_.attention->v].name);
    return out;
  }

 private:
  void countUses(const ExprPtr& e) {
    if (uses_[e.get()]++ > 0) return;
    for (const ExprPtr& a : e->args) countUses(a);
  }

  /// Whether e reads an inner (reduction) variable outside any Reduce.
  bool dependsOnInner(const ExprPtr& e) {
    if (auto it = inner_deps_.find(e.get()); it != inner_deps_.end()) return it->second;
    bool d = false;
    for (const IndexPtr& i : e->index) d |= readsVar(i, [&](int64_t v) { return v >= outerRank_; });
    if (e->kind != Expr::Kind::Reduce)
      for (const ExprPtr& a : e->args) d |= dependsOnInner(a);
    return inner_deps_[e.get()] = d;
  }

  std::string render(const ExprPtr& e, bool inReduce) {
    // Inside a reduction's body only row-level values may become
    // temporaries: a temporary of the inner loop would be out of scope there.
    const bool shared = e->kind == Expr::Kind::Op && uses_[e.get()] > 1 && (!inReduce || !dependsOnInner(e));
    const bool named = e->kind == Expr::Kind::Reduce || shared;
    if (!named) return text(e, inReduce);
    if (auto it = temps_.find(e.get()); it != temps_.end()) return it->second;
    std::string definition = text(e, inReduce);
    std::string name = fmt::format("t{}", temps_.size());
    temps_[e.get()] = name;
    (dependsOnInner(e) ? inner_ : outer_).push_back(name + " = " + definition);
    return name;
  }

  std::string text(const ExprPtr& e, bool inReduce) {
    switch (e->kind) {
      case Expr::Kind::Load: return fmt::format("{}[{}]", k_.inputs[e->buffer].name, list(e->index));
      case Expr::Kind::Const: return constantText(*e);
      case Expr::Kind::Acc: return "acc";
      case Expr::Kind::InBounds:
      case Expr::Kind::IndexValue: return inlineText(*e);
      case Expr::Kind::Reduce:
        return fmt::format("{} over {}: {}", opInfo(e->op).name, loops(k_.reduceSizes, k_.outer.size()),
                           render(e->args[0], true));
      case Expr::Kind::Select: {
        std::string s = "select(";
        for (size_t k = 0; k < e->args.size(); ++k)
          s += fmt::format(
              "{}{}{}", k ? ", " : "",
              k + 1 < e->args.size() ? fmt::format("{} < {}: ", toString(e->index[0]), toString(e->bounds[k])) : "",
              render(e->args[k], inReduce));
        return s + ")";
      }
      case Expr::Kind::Op: {
        std::string s = std::string(opInfo(e->op).name) + "(";
        for (size_t k = 0; k < e->args.size(); ++k) s += (k ? ", " : "") + render(e->args[k], inReduce);
        for (const auto& [name, value] : e->attrs) s += fmt::format(", {}={}", name, toString(value));
        return s + ")";
      }
    }
    return "?";
  }

  static std::string list(const Indices& idx) {
    std::string s;
    for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + toString(idx[k]);
    return s;
  }

  static std::string loops(const std::vector<Dim>& sizes, size_t first) {
    std::string s;
    for (size_t k = 0; k < sizes.size(); ++k)
      s += fmt::format("{}i{} in [0, {})", k ? ", " : "", first + k, ir::toString(sizes[k]));
    return sizes.empty() ? "(one point)" : s;
  }

  const Kernel& k_;
  const int64_t outerRank_;
  std::unordered_map<const Expr*, int> uses_;
  std::unordered_map<const Expr*, bool> inner_deps_;
  std::unordered_map<const Expr*, std::string> temps_;
  std::vector<std::string> outer_, inner_;
};

}  // namespace

std::string print(const Kernel& k) { return Printer(k).run(); }

}  // namespace graphc::codegen::kernel
