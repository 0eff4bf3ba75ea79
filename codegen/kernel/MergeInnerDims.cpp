// Short inner dims merged: a pointwise or GEMM-epilogue kernel whose last
// outer dim is static and shorter than kMinInnerExtent gets it merged with
// the dim before (when that is static too), again until the last dim is
// long enough. The kernel's innermost loop runs along the last dim, and
// that is what the backend vectorises: a convolution's epilogue over
// [N, C, 1, 1] or [N, C, 4, 4] otherwise runs one or four elements per
// loop, scalar (a sigmoid through scalar expf). The merged variable j
// stands for (j / inner, j % inner), which the index constructors fold
// back to j wherever a tensor is read contiguously across the two dims.
// A kernel whose reads test bounds (a padded window) is left as it is:
// its clamped coordinates would stay j / inner and j % inner, a division
// per element that turns every vector load into a gather.
//
// Contract: iteration order and the flattened outer point of every
// element are unchanged (row-major), so a GEMM accumulator, which is
// indexed by that point, needs nothing.
#include <unordered_set>

#include "codegen/kernel/Lowerer.h"
#include "codegen/kernel/Substitute.h"

namespace graphc::codegen::kernel {

namespace {

constexpr int64_t kMinInnerExtent = 16;

/// Whether `e` reads through a bounds test (a padded window). The
/// expressions are a DAG: each shared node is visited once.
bool testsBounds(const Expr& e, std::unordered_set<const Expr*>& seen) {
  if (!seen.insert(&e).second) return false;
  if (e.kind == Expr::Kind::InBounds) return true;
  for (const ExprPtr& a : e.args)
    if (testsBounds(*a, seen)) return true;
  return false;
}

}  // namespace

Kernel mergeShortInnerDims(Kernel k) {
  if (k.kind == KernelKind::Reduction || k.kind == KernelKind::Attention)
    return k;  // (attention: the keys stay the last dim)
  // A padded window's reads clamp each coordinate: merged, every one would
  // be a division and a remainder per element, which no vector unit has.
  std::unordered_set<const Expr*> seen;
  for (const Store& s : k.stores)
    if (testsBounds(*s.value, seen)) return k;
  while (k.outer.size() >= 2) {
    const size_t rank = k.outer.size();
    const Dim& inner = k.outer[rank - 1];
    const Dim& outer = k.outer[rank - 2];
    if (!inner.isStatic() || !outer.isStatic() || inner.size >= kMinInnerExtent || inner.size == 0) break;
    const int64_t merged = outer.size * inner.size;
    const IndexPtr j = Index::var(static_cast<int64_t>(rank - 2), merged);
    VarSubstitution substitution({{static_cast<int64_t>(rank - 2), div(j, Index::constant(inner.size))},
                                  {static_cast<int64_t>(rank - 1), mod(j, Index::constant(inner.size))}});
    for (Store& s : k.stores) {
      for (IndexPtr& i : s.index) i = substitution.index(i);
      s.value = substitution.expr(s.value);
    }
    if (k.gemm) {  // the GEMM's operand index maps read the outer variables too
      for (IndexPtr& i : k.gemm->aIndex) i = substitution.index(i);
      for (IndexPtr& i : k.gemm->bIndex) i = substitution.index(i);
    }
    k.outer.pop_back();
    k.outer.back() = Dim::of(merged);
  }
  return k;
}

}  // namespace graphc::codegen::kernel
