#include "passes/RewriteUtils.h"

#include <unordered_set>

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

}  // namespace graphc::passes
