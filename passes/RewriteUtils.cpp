#include "passes/RewriteUtils.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/KernelKind.h"

namespace graphc::passes {

bool removeDeadNodes(ir::Region& r) {
  bool changed = false;
  for (const auto& n : r.nodes())
    for (const auto& region : n->regions()) changed |= removeDeadNodes(*region);
  std::unordered_set<const ir::Value*> live(r.returns.begin(), r.returns.end());
  std::unordered_set<const ir::Node*> dead;
  for (auto it = r.nodes().rbegin(); it != r.nodes().rend(); ++it) {
    const ir::Node& n = **it;
    bool used = false;
    for (const auto& v : n.results()) used |= live.count(v.get()) > 0;
    if (!used) {
      dead.insert(&n);
      continue;
    }
    live.insert(n.operands.begin(), n.operands.end());
  }
  if (!dead.empty()) r.removeIf([&](const ir::Node& n) { return dead.count(&n) > 0; });
  return changed || !dead.empty();
}

namespace {

/// What a kernel computes, for its name: the first five distinct op names
/// of its body in order, constants aside ("linear_add_relu").
std::string kernelOps(const ir::Node& fused) {
  if (ir::parseKernelKind(fused.attrs.find("kind")->s) == ir::KernelKind::Attention) return "attention";
  std::vector<std::string> names;
  for (const auto& n : fused.regions()[0]->nodes()) {
    if (n->op == ir::OpId::Constant || n->op == ir::OpId::Full) continue;
    std::string name(n->name());
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (names.empty()) return "copy";  // a body that returns its parameters
  if (names.size() > 5) names.resize(5);
  return fmt::format("{}", fmt::join(names, "_"));
}

}  // namespace

bool numberKernels(ir::Region& r, int& next) {
  bool renamed = false;
  for (const auto& n : r.nodes()) {
    if (n->op == ir::OpId::Fused) {
      const std::string name = fmt::format("k{}_{}", next++, kernelOps(*n));
      renamed |= n->attrs.find("name")->s != name;
      n->attrs.set("name", ir::Attribute::ofString(name));
      continue;
    }
    for (const auto& inner : n->regions()) renamed |= numberKernels(*inner, next);
  }
  return renamed;
}

}  // namespace graphc::passes
