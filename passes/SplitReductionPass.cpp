// split-reduction: a reduction over a long row — a whole large tensor
// summed, a loss averaged over batch and positions — runs as one row per
// output: on one core when the outputs are few, and with nothing between
// its start and its end where a cancelled run could stop (RunOptions::
// cancel is looked at between rows). When a sum, mean, amax, amin or prod
// of f32 or f64 reduces more than kCancelCheckWork (2^22) elements per
// output over several dims, all static, it becomes two reductions, as
// Inductor's split reductions do:
//
//   sum(x[A, B, C], dims=[0, 1, 2])  →  sum(sum(x, dims=[2], keepdim), dims=[0, 1, 2])
//
// the inner one over the longest run of innermost reduced dims whose
// elements number at most 2^22 (rows of bounded work, as many as the outer
// reduced elements times the outputs), the outer one over what is left
// (the inner dims now of size 1). The split is made only where the inner
// rows hold at least 1024 elements, so the intermediate is at most 1/1024
// of the input. Sums and products are reassociated, as any parallel
// reduction does; amax and amin are exact, and so is a mean of equal-sized
// means up to rounding. Runs after decompose (a static mean is a sum by
// then) and before fuse, which fuses the inner reduction with its
// producers. Changed: a reduction was split.
#include <algorithm>

#include "ir/Builder.h"
#include "ir/ShapeRules.h"
#include "passes/Passes.h"
#include "runtime/Executable.h"

namespace graphc::passes {

namespace {

using ir::Attribute;
using ir::AttrMap;
using ir::OpId;

// Inner rows shorter than this would make the intermediate too large a
// share of the input for the split to pay.
constexpr int64_t kShortestInnerRow = 1024;

/// The dims the inner reduction takes, or empty when `n` stays whole.
std::vector<int64_t> innerDims(const ir::Node& n) {
  switch (n.op) {
    case OpId::Sum:
    case OpId::Mean:
    case OpId::Amax:
    case OpId::Amin:
    case OpId::Prod: break;
    default: return {};
  }
  const ir::TensorType& t = n.operands[0]->type;
  if ((t.dtype != ir::DType::F32 && t.dtype != ir::DType::F64) || !t.isStatic()) return {};
  std::vector<int64_t> reduced;  // the reduced dims of size > 1, in order
  int64_t count = 1;
  for (int64_t d : ir::rules::reducedAxes(n.attrs, t.rank()))
    if (t.shape[static_cast<size_t>(d)].size > 1) {
      reduced.push_back(d);
      count *= t.shape[static_cast<size_t>(d)].size;
    }
  std::sort(reduced.begin(), reduced.end());
  if (reduced.size() < 2 || count <= runtime::kCancelCheckWork) return {};
  std::vector<int64_t> inner;
  int64_t row = 1;
  for (size_t k = reduced.size(); k-- > 1;) {  // never the outermost: the outer reduction keeps it
    const int64_t size = t.shape[static_cast<size_t>(reduced[k])].size;
    if (!inner.empty() && row * size > runtime::kCancelCheckWork) break;
    inner.insert(inner.begin(), reduced[k]);
    row *= size;
  }
  if (row < kShortestInnerRow) return {};
  return inner;
}

bool split(ir::Region& r) {
  bool changed = false;
  for (size_t pos = 0; pos < r.nodes().size(); ++pos) {
    ir::Node& n = *r.nodes()[pos];
    for (const auto& inner : n.regions()) changed |= split(*inner);
    const std::vector<int64_t> dims = innerDims(n);
    if (dims.empty()) continue;
    ir::NodeBuilder b(r, pos, n.loc);
    AttrMap innerAttrs;
    innerAttrs.set("dims", Attribute::ofInts(dims));
    innerAttrs.set("keepdim", Attribute::ofBool(true));
    ir::Value* rows = b.op(n.op, {n.operands[0]}, innerAttrs);
    n.operands[0] = rows;  // the outer reduction: the same op and attributes over the rows' results
    pos = b.position();
    changed = true;
  }
  return changed;
}

}  // namespace

PassResult SplitReductionPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {split(g.body), false}; }

}  // namespace graphc::passes
