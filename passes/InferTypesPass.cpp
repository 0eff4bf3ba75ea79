// infer-types: recomputes every node's result types from its op's type rule,
// in program order, so types flow from the parameters to the returns. A pass
// that rewrites operands can leave stale types behind; this makes them
// right again. Creation ops (full, constant) keep their written types,
// which are their source of truth. Fails with a located error where a rule
// rejects its operands. Changed: some result type differs from before.
#include <fmt/format.h>

#include "passes/Passes.h"

namespace graphc::passes {

namespace {
bool inferRegion(ir::Region& r, ir::DiagnosticEngine& diags, bool& changed) {
  for (const auto& n : r.nodes()) {
    for (const auto& region : n->regions())
      if (!inferRegion(*region, diags, changed)) return false;
    std::vector<ir::TensorType> declared;
    for (const auto& v : n->results()) declared.push_back(v->type);
    ir::TypeRuleResult inferred = ir::inferTypes(*n, &declared);
    if (!inferred.ok()) {
      diags.error(n->loc, inferred.error);
      return false;
    }
    if (inferred.types.size() != n->numResults()) {
      diags.error(n->loc, fmt::format("'{}' has {} results but its type rule gives {}", n->name(), n->numResults(),
                                      inferred.types.size()));
      return false;
    }
    for (size_t k = 0; k < inferred.types.size(); ++k)
      if (n->result(k)->type != inferred.types[k]) {
        n->result(k)->type = inferred.types[k];
        changed = true;
      }
  }
  return true;
}
}  // namespace

PassResult InferTypesPass::run(ir::Graph& g, ir::DiagnosticEngine& diags) {
  bool changed = false;
  bool ok = inferRegion(g.body, diags, changed);
  return {changed, !ok};
}

}  // namespace graphc::passes
