// dce: removes nodes none of whose results is used by a later node or a
// return, in every region. Every op is pure (cond's branches are pure
// regions), so an unused result means dead work. Sweeps backwards, so a
// chain of dead nodes goes in one run. Region parameters are never removed:
// they are the region's interface with its op. Changed: a node was removed.
#include <unordered_set>

#include "passes/Passes.h"

namespace graphc::passes {

namespace {
bool sweep(ir::Region& r) {
  bool changed = false;
  for (const auto& n : r.nodes())
    for (const auto& region : n->regions()) changed |= sweep(*region);
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
}  // namespace

PassResult DCEPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {sweep(g.body), false}; }

}  // namespace graphc::passes
