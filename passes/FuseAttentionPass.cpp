// fuse-attention: merges the three kernels `fuse` makes of scaled
// dot-product attention into one `fused` op of kind "attention", which a
// backend computes a block of keys at a time without storing the score
// matrix (codegen/kernel/KernelIR.h's Attention; on the cpu backend
// runtime/cpu/Attention.h). However the model spelled it — ONNX MatMul +
// Softmax chains from either exporter, torch's SDPA decomposed — after
// decompose and fuse it is
//
//   %s = fused(%q, %k, ...) {kind = "matmul_epilogue"}  matmul(q, k), then pointwise ops (scale, mask, bias)
//   %p = fused(%s, ...)     {kind = "reduction"}        softmax over the last dim, maybe after pointwise ops
//   %o = fused(%p, %v)      {kind = "matmul_epilogue"}  matmul(p, v) alone
//
// and they merge when what the first two kernels compute is read by the
// next kernel only and the three bodies, in order, are an attention body
// as ir/AttentionPattern.h's matchAttention defines it — the one
// definition the kernel lowering uses too: everything f32; the scores'
// matmul of parameters of rank ≥ 2, then pointwise ops (and a reshape
// that regroups batch dims: BLOOM's [B·H, S, S] as [B, H, S, S]); the
// softmax over the last dim as decompose writes it, with either of torch's
// safe-softmax forms; the values' bare matmul. The scores' kernel may also
// compute what the safe softmax tests the scores for (torch.compile's
// all(x == −inf)). The merged body is the three bodies in order, so the
// reference interpreter runs it unchanged.
//
// It runs after fuse, and names the kernels again as fuse does; only
// backends that run attention kernels put it in their pipeline
// (Backend::attentionKernels; passes::DefaultPipelineOptions).
//
// Changed: an attention kernel was formed.
#include <algorithm>
#include <unordered_map>

#include "ir/AttentionPattern.h"
#include "ir/KernelKind.h"
#include "passes/Passes.h"
#include "passes/RegionSweep.h"
#include "passes/RewriteUtils.h"

namespace graphc::passes {

namespace {

using ir::OpId;

const ir::Region& bodyOf(const ir::Node& fused) { return *fused.regions()[0]; }

/// Whether `n` is a fused op of kind `kind`.
bool isKernel(const ir::Node* n, ir::KernelKind kind) {
  return n && n->op == OpId::Fused && ir::parseKernelKind(n->attrs.find("kind")->s) == kind;
}

/// The values kernel's operand p (its body matmul(p, v) of two
/// parameters, nothing else); null for any other kernel.
const ir::Value* valuesKernelInput(const ir::Node& k) {
  const ir::Region& body = bodyOf(k);
  if (body.nodes().size() != 1 || body.returns.size() != 1) return nullptr;
  const ir::Node& m = *body.nodes()[0];
  if (m.op != OpId::Matmul || body.returns[0] != m.result()) return nullptr;
  for (size_t i = 0; i < body.params().size(); ++i)
    if (body.param(i) == m.operands[0]) return k.operands[i];
  return nullptr;
}

/// Builds the attention kernel of scores, softmax and values kernels.
std::unique_ptr<ir::Node> merge(const ir::Node& scores, const ir::Node& softmax, const ir::Node& values) {
  std::unordered_map<const ir::Value*, ir::Value*> inner;  // outer value → the merged body's
  std::vector<ir::Value*> inputs;
  for (const ir::Node* k : {&scores, &softmax, &values})
    for (ir::Value* v : k->operands) {
      const ir::Node* producer = v->definingNode();
      if (producer != &scores && producer != &softmax && std::find(inputs.begin(), inputs.end(), v) == inputs.end())
        inputs.push_back(v);
    }
  ir::AttrMap attrs;
  attrs.set("kind", ir::Attribute::ofString(std::string(ir::kernelKindName(ir::KernelKind::Attention))));
  attrs.set("name", ir::Attribute::ofString("k"));  // named with the others below
  auto fused = std::make_unique<ir::Node>(OpId::Fused, inputs, attrs, values.loc);
  ir::Region& body = fused->addRegion("body");
  for (ir::Value* v : inputs) inner[v] = body.addParam(v->type, v->name, v->loc);
  // Each body in turn, its parameters the new ones or what the kernels
  // before returned.
  for (const ir::Node* k : {&scores, &softmax, &values}) {
    std::vector<ir::Value*> args;
    for (const ir::Value* v : k->operands) args.push_back(inner.at(v));
    const std::vector<ir::Value*> returned = ir::inlineRegion(bodyOf(*k), body, body.nodes().size(), args);
    for (size_t i = 0; i < returned.size(); ++i) inner[k->result(i)] = returned[i];
  }
  body.returns.push_back(inner.at(values.result()));
  body.returnLoc = bodyOf(values).returnLoc;
  fused->addResult(values.result()->type, values.result()->name, values.result()->loc);
  return fused;
}

/// Whether every result of `k` is read once, by `reader`.
bool readOnlyBy(const ir::Node& k, const ir::Node& reader, RegionSweep& sweep) {
  for (const auto& r : k.results())
    if (sweep.uses(r.get()) != 1 ||
        std::find(reader.operands.begin(), reader.operands.end(), r.get()) == reader.operands.end())
      return false;
  return true;
}

bool fuseAttention(ir::Region& r) {
  bool changed = false;
  {
    RegionSweep sweep(r);
    while (ir::Node* n = sweep.next()) {
      for (const auto& inner : n->regions())
        if (n->op != OpId::Fused) changed |= fuseAttention(*inner);
      if (n->op != OpId::Fused || n->results().size() != 1 ||
          ir::parseKernelKind(n->attrs.find("kind")->s) != ir::KernelKind::MatmulEpilogue)
        continue;
      const ir::Value* probabilities = valuesKernelInput(*n);
      const ir::Node* softmax = probabilities ? probabilities->definingNode() : nullptr;
      if (!isKernel(softmax, ir::KernelKind::Reduction) || softmax->results().size() != 1 ||
          !readOnlyBy(*softmax, *n, sweep))
        continue;
      std::unique_ptr<ir::Node> attention;  // with the first matmul kernel the softmax kernel reads that fits
      for (const ir::Value* v : softmax->operands) {
        const ir::Node* scores = v->definingNode();
        if (attention || !isKernel(scores, ir::KernelKind::MatmulEpilogue) || !readOnlyBy(*scores, *softmax, sweep))
          continue;
        attention = merge(*scores, *softmax, *n);
        if (!ir::matchAttention(bodyOf(*attention))) attention.reset();
      }
      if (!attention) continue;
      ir::Node* inserted = r.insert(sweep.position(), std::move(attention));
      sweep.addUses(*inserted);
      sweep.replace(n->result(), inserted->result());
      sweep.dropCurrent();
      changed = true;
    }
  }
  if (changed) removeDeadNodes(r);  // the scores and softmax kernels
  return changed;
}

}  // namespace

PassResult FuseAttentionPass::run(ir::Graph& g, ir::DiagnosticEngine&) {
  bool changed = fuseAttention(g.body);
  int next = 0;
  changed |= numberKernels(g.body, next);
  return {changed, false};
}

}  // namespace graphc::passes
