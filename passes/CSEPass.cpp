// cse: within each region, a node with the same op, operands, attributes and
// result types as an earlier node is replaced by that node (all ops are
// pure). Nodes inside regions are merged within their region; nodes that
// carry regions (cond, fused) are themselves left alone, since comparing
// regions structurally is not worth it for the graphs seen so far. The
// duplicate stays behind, unused, for dce.
// Changed: some use was redirected.
#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "passes/Passes.h"

namespace graphc::passes {

namespace {

/// A node's identity for CSE. Operands compare by pointer (values are unique
/// within the region); attributes and types by their text form, except that
/// dense values (weights, possibly megabytes) enter by a hash of their bytes
/// and nodes with equal keys are then compared attribute by attribute.
using NodeKey = std::tuple<ir::OpId, std::vector<const ir::Value*>, std::string>;

std::string attributeKey(const ir::Attribute& a) {
  if (a.kind != ir::Attribute::Kind::Dense) return ir::toString(a);
  const auto bytes = a.dense->bytes();
  const size_t hash =
      std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return fmt::format("{}#{:x}", ir::toString(a, {.elideDenseAbove = 0}), hash);
}

NodeKey keyOf(const ir::Node& n) {
  std::string extra;
  for (const auto& [name, value] : n.attrs) extra += name + "=" + attributeKey(value) + ";";
  for (const auto& v : n.results()) extra += ir::toString(v->type) + ";";
  return {n.op, {n.operands.begin(), n.operands.end()}, extra};
}

/// One walk in order: each node's operands are first redirected to what
/// the duplicates they name were replaced by (an operand is always an
/// earlier node's result or a parameter), so a redirected use costs one
/// lookup instead of a scan of the region (quadratic on large graphs).
bool cseRegion(ir::Region& r) {
  bool changed = false;
  std::map<NodeKey, std::vector<ir::Node*>> seen;
  std::unordered_map<const ir::Value*, ir::Value*> replacedBy;
  auto redirect = [&](ir::Value*& v) {
    if (auto it = replacedBy.find(v); it != replacedBy.end()) v = it->second;
  };
  for (const auto& n : r.nodes()) {
    for (ir::Value*& v : n->operands) redirect(v);
    for (const auto& region : n->regions()) changed |= cseRegion(*region);
    if (!n->regions().empty()) continue;
    std::vector<ir::Node*>& same = seen[keyOf(*n)];
    auto earlier = std::find_if(same.begin(), same.end(), [&](const ir::Node* e) { return e->attrs == n->attrs; });
    if (earlier == same.end()) {
      same.push_back(n.get());
      continue;
    }
    for (size_t k = 0; k < n->numResults(); ++k) replacedBy[n->result(k)] = (*earlier)->result(k);
    changed = true;
  }
  for (ir::Value*& v : r.returns) redirect(v);
  return changed;
}

}  // namespace

PassResult CSEPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {cseRegion(g.body), false}; }

}  // namespace graphc::passes
