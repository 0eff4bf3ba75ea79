// The pieces of attention the fuse-attention pass forms kernels around and
// the kernel lowering computes inside one, recognised by one matcher each
// so that the two agree on what an attention kernel holds.
//
// The softmax over a tensor's last dim as the decompose pass spells it:
//
//   %m = amax(%x) {dims = [-1], keepdim = true}
//   %e = exp(sub(%x, %m))
//   %p = div(%e, sum(%e) {dims = [-1], keepdim = true})
//
// optionally followed by one of torch's "safe softmax" forms, which make
// the rows of scores that are all −inf zeros: where(ne(%p, %p), 0.0, %p)
// (scaled_dot_product_attention exported by torch.onnx: every row whose
// softmax is NaN, one with a NaN score too), or where(all(%x == −inf),
// 0.0, %p) (torch._safe_softmax through torch.compile).
#pragma once

#include <optional>
#include <vector>

#include "ir/Graph.h"

namespace graphc::ir {

struct SoftmaxMatch {
  const Value* input = nullptr;     // %x
  bool nanRowsToZero = false;       // where(ne(p, p), 0, p)
  bool minusInfRowsToZero = false;  // where(all(x == −inf), 0, p)
  std::vector<const Node*> nodes;   // the pattern's nodes, %x's producer excluded
};

/// The softmax `p` is, if it is one.
std::optional<SoftmaxMatch> matchSoftmax(const Value* p);

/// Whether `n` is a reshape that only regroups the dims before the last
/// two (BLOOM's scores [B·H, S, S] viewed as [B, H, S, S]): every element
/// keeps its row-major position, so a kernel may read its operand's
/// element at the point it computes.
bool regroupsBatchDims(const Node& n);

/// An attention kernel's body (a `fused` op of kind "attention"): it
/// returns values = matmul(p, v) alone, p a softmax over the last dim of x
/// (matchSoftmax), x computed from scores = matmul(q, k) by pointwise ops
/// at x's shape and reshapes that regroup batch dims, scores holding x's
/// elements in x's row-major order (the same shape, or its batch dims
/// regrouped). q, k and v are parameters of rank ≥ 2; everything is f32.
/// Any other op is a scalar constant or part of the softmax.
struct AttentionMatch {
  const Node* scores = nullptr;  // matmul(q, k)
  const Node* values = nullptr;  // matmul(p, v)
  SoftmaxMatch softmax;
};
std::optional<AttentionMatch> matchAttention(const Region& body);

}  // namespace graphc::ir
