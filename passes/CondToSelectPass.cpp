// cond-to-select: a cond whose two branches are pure pointwise code — only
// pointwise ops and scalar constants, at most kMaxSelectNodes nodes in the
// two together — becomes both branches inlined and one `where(pred, then,
// else)` per result. Both sides are computed, which is cheaper than a
// branch once the where fuses with its neighbours into one kernel (the
// point of the rewrite); the bound keeps the extra work small. A branch
// holding a reduction, a matmul, eigh, a shape op or another cond keeps its
// cond. NaN or inf in the branch not taken is harmless: where discards it.
// Changed: a cond became a select.
#include "ir/Builder.h"
#include "passes/Passes.h"
#include "passes/RegionSweep.h"
#include "runtime/reference/Constants.h"

namespace graphc::passes {

namespace {

constexpr size_t kMaxSelectNodes = 16;

bool isCheapPointwise(const ir::Region& r) {
  for (const auto& n : r.nodes()) {
    const bool scalarConstant = n->op == ir::OpId::Constant && n->result()->type.rank() == 0;
    if (!n->info().isPointwise() && !scalarConstant) return false;
  }
  return true;
}

bool selectConds(ir::Region& r) {
  bool changed = false;
  RegionSweep sweep(r);
  while (ir::Node* n = sweep.next()) {
    for (const auto& inner : n->regions()) changed |= selectConds(*inner);
    if (n->op != ir::OpId::Cond) continue;
    const ir::Region& thenRegion = *n->regions()[0];
    const ir::Region& elseRegion = *n->regions()[1];
    if (!isCheapPointwise(thenRegion) || !isCheapPointwise(elseRegion) ||
        thenRegion.nodes().size() + elseRegion.nodes().size() > kMaxSelectNodes)
      continue;
    std::vector<ir::Value*> args(n->operands.begin() + 1, n->operands.end());
    std::vector<ir::Value*> thenResults = ir::inlineRegion(thenRegion, r, sweep.position(), args);
    std::vector<ir::Value*> elseResults = ir::inlineRegion(elseRegion, r, sweep.position(), args);
    ir::NodeBuilder b(r, sweep.position(), n->loc);
    for (size_t k = 0; k < n->numResults(); ++k)
      sweep.replace(n->result(k), b.op(ir::OpId::Where, {n->operands[0], thenResults[k], elseResults[k]}));
    changed = true;  // n stays, dead, for dce
  }
  return changed;
}

}  // namespace

PassResult CondToSelectPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {selectConds(g.body), false}; }

}  // namespace graphc::passes
