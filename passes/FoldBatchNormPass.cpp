// fold-batch-norm: a batch_norm in inference form whose input is a conv or
// conv_transpose used by nothing else, with constant weight (and bias) and
// constant statistics, becomes that convolution with its weight scaled and
// its bias shifted per output channel — what torch.fx's fuse_conv_bn_eval
// and onnxruntime's Conv+BatchNormalization fusion do:
//
//   scale[o] = weight[o] / sqrt(var[o] + eps)
//   W'[o, ...] = W[o, ...] · scale[o]         (conv_transpose: W[.., o', ...], o = g·O/g + o')
//   b'[o] = (b[o] − mean[o]) · scale[o] + bias[o]   (b = 0 without a bias)
//
// The new weights are computed in f64 from the constants and rounded once
// to the dtype. What is left of batch_norm is decomposed later.
// Changed: a batch_norm was folded.
#include <cmath>

#include "ir/Builder.h"
#include "passes/Passes.h"
#include "passes/RegionSweep.h"
#include "passes/RewriteUtils.h"
#include "runtime/reference/Constants.h"

namespace graphc::passes {

namespace {

using ir::OpId;

/// Folds `bn`, the sweep's current node, when it is a batch_norm of a
/// convolution only it reads.
bool foldOne(ir::Region& r, ir::Node& bn, RegionSweep& sweep) {
  if (bn.op != OpId::BatchNorm) return false;
  ir::Node* conv = bn.operands[0]->definingNode();
  if (!conv || (conv->op != OpId::Conv && conv->op != OpId::ConvTranspose) || sweep.uses(bn.operands[0]) != 1)
    return false;
  std::vector<runtime::Tensor> stats;  // mean, var, weight, bias
  for (size_t k = 1; k < 5; ++k) {
    std::optional<runtime::Tensor> t = runtime::constantTensor(bn.operands[k]);
    if (!t) return false;
    stats.push_back(*t);
  }
  std::optional<runtime::Tensor> weight = runtime::constantTensor(conv->operands[1]);
  std::optional<runtime::Tensor> bias;
  if (conv->operands.size() == 3 && !(bias = runtime::constantTensor(conv->operands[2]))) return false;
  if (!weight) return false;
  const ir::Attribute* epsAttr = bn.attrs.find("eps");
  const double eps = epsAttr ? epsAttr->asDouble() : 1e-5;
  const int64_t channels = bn.result()->type.shape[1].size;
  std::vector<double> scale(static_cast<size_t>(channels));
  for (int64_t o = 0; o < channels; ++o)
    scale[static_cast<size_t>(o)] = stats[2].getDouble(o) / std::sqrt(stats[1].getDouble(o) + eps);
  // The output channel of each weight element: dim 0 of a conv's weight,
  // group·(O/g) + dim 1 of a transposed one's.
  runtime::Tensor w(weight->dtype(), weight->shape());
  const std::vector<int64_t>& ws = weight->shape();
  int64_t inner = 1;
  for (size_t d = 2; d < ws.size(); ++d) inner *= ws[d];
  const ir::Attribute* groupsAttr = conv->attrs.find("groups");
  const int64_t groups = groupsAttr ? groupsAttr->i : 1;
  for (int64_t i = 0; i < weight->numel(); ++i) {
    int64_t o;
    if (conv->op == OpId::Conv) {
      o = i / (ws[1] * inner);
    } else {
      const int64_t in = i / (ws[1] * inner), j = i / inner % ws[1];
      o = in / (ws[0] / groups) * ws[1] + j;
    }
    w.setDouble(i, weight->getDouble(i) * scale[static_cast<size_t>(o)]);
  }
  runtime::Tensor b(bn.result()->type.dtype, {channels});
  for (int64_t o = 0; o < channels; ++o) {
    const double before = bias ? bias->getDouble(o) : 0.0;
    b.setDouble(o, (before - stats[0].getDouble(o)) * scale[static_cast<size_t>(o)] + stats[3].getDouble(o));
  }
  const size_t pos = sweep.position();
  ir::Value* newWeight = runtime::insertConstant(r, pos, w, conv->loc);
  ir::Value* newBias = runtime::insertConstant(r, pos + 1, b, bn.loc);
  ir::Node* folded = ir::insertNode(r, pos + 2, conv->op, {conv->operands[0], newWeight, newBias}, conv->attrs,
                                    {bn.result()->type}, conv->loc);
  folded->result()->name = bn.result()->name;
  sweep.addUses(*folded);
  sweep.replace(bn.result(), folded->result());
  sweep.dropCurrent();  // the batch_norm, now unused; the old convolution goes with the dead nodes
  return true;
}

bool foldRegion(ir::Region& r) {
  bool changed = false;
  for (const auto& n : r.nodes())
    for (const auto& inner : n->regions()) changed |= foldRegion(*inner);
  bool folded = false;
  {
    RegionSweep sweep(r);
    while (ir::Node* n = sweep.next()) folded |= foldOne(r, *n, sweep);
  }
  if (folded) removeDeadNodes(r);
  return changed || folded;
}

}  // namespace

PassResult FoldBatchNormPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {foldRegion(g.body), false}; }

}  // namespace graphc::passes
