// cse: within each region, a node with the same op, operands, attributes and
// result types as an earlier node is replaced by that node (all ops are
// pure). Nodes inside regions are merged within their region; nodes that
// carry regions (cond, fused) are themselves left alone, since comparing
// regions structurally is not worth it for the graphs seen so far. The
// duplicate stays behind, unused, for dce.
// Changed: some use was redirected.
#include <map>
#include <tuple>

#include "passes/Passes.h"

namespace graphc::passes {

namespace {

/// A node's identity for CSE. Operands compare by pointer (values are unique
/// within the region); attributes and types by their text form.
using NodeKey = std::tuple<ir::OpId, std::vector<const ir::Value*>, std::string>;

NodeKey keyOf(const ir::Node& n) {
  std::string extra;
  for (const auto& [name, value] : n.attrs) extra += name + "=" + ir::toString(value) + ";";
  for (const auto& v : n.results()) extra += ir::toString(v->type) + ";";
  return {n.op, {n.operands.begin(), n.operands.end()}, extra};
}

bool cseRegion(ir::Region& r) {
  bool changed = false;
  std::map<NodeKey, ir::Node*> seen;
  for (const auto& n : r.nodes()) {
    for (const auto& region : n->regions()) changed |= cseRegion(*region);
    if (!n->regions().empty()) continue;
    auto [it, fresh] = seen.emplace(keyOf(*n), n.get());
    if (fresh) continue;
    for (size_t k = 0; k < n->numResults(); ++k) r.replaceAllUses(n->result(k), it->second->result(k));
    changed = true;
  }
  return changed;
}

}  // namespace

PassResult CSEPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {cseRegion(g.body), false}; }

}  // namespace graphc::passes
