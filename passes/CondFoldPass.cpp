// cond-fold: a cond whose predicate is a constant (constant or full) is
// replaced by a copy of the branch it takes, inlined before it with the
// branch's parameters standing for the cond's operands. The cond itself is
// left dead for dce. Works in nested regions too. Changed: a cond folded.
#include "ir/Builder.h"
#include "passes/Passes.h"
#include "passes/RegionSweep.h"
#include "runtime/reference/Constants.h"

namespace graphc::passes {

namespace {
bool foldConds(ir::Region& r) {
  bool changed = false;
  RegionSweep sweep(r);
  while (ir::Node* n = sweep.next()) {
    for (const auto& inner : n->regions()) changed |= foldConds(*inner);
    if (n->op != ir::OpId::Cond) continue;
    auto pred = splatValue(n->operands[0]);
    if (!pred) continue;
    const ir::Region& taken = *n->regions()[*pred != 0 ? 0 : 1];
    std::vector<ir::Value*> args(n->operands.begin() + 1, n->operands.end());
    std::vector<ir::Value*> results = ir::inlineRegion(taken, r, sweep.position(), args);
    for (size_t k = 0; k < results.size(); ++k) sweep.replace(n->result(k), results[k]);
    changed = true;
  }
  return changed;
}
}  // namespace

PassResult CondFoldPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {foldConds(g.body), false}; }

}  // namespace graphc::passes
