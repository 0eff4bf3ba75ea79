// Small windows unrolled: a window kernel (conv, pooling) whose window is
// static and at most kMaxUnrolledPoints points becomes a pointwise kernel.
// Each Reduce is replaced by its combination written out point by point,
// in loop order and in the same accumulation type (floats sum in f64 and
// round once, amax/amin combine with the same NaN-propagating maximum), so
// the values are the reduction kernel's. What changes is the loop nest: a
// pointwise kernel's innermost loop runs along the output's last dim, which
// the backend vectorises, where a 3×3 window's reduction loop is nine
// scalar iterations per output element.
//
// Contract: `k` is a Reduction kernel; the result is `k` unchanged unless
// every reduce size is static, their product is at most the limit, every
// Reduce is over floats and no store is inside the reduction.
#include <unordered_map>

#include "codegen/kernel/Lowerer.h"
#include "codegen/kernel/Substitute.h"

namespace graphc::codegen::kernel {

namespace {

constexpr int64_t kMaxUnrolledPoints = 64;

/// Replaces each Reduce by its unrolled combination over `points`.
class Unroller {
 public:
  Unroller(int64_t firstInner, std::vector<std::vector<int64_t>> points)
      : first_(firstInner), points_(std::move(points)) {}

  ExprPtr expr(const ExprPtr& e) {
    if (auto it = done_.find(e.get()); it != done_.end()) return it->second;
    ExprPtr r;
    if (e->kind == Expr::Kind::Reduce) {
      r = unrolled(*e);
    } else {
      auto rebuilt = std::make_shared<Expr>(*e);
      for (ExprPtr& a : rebuilt->args) a = expr(a);
      r = rebuilt;
    }
    return done_[e.get()] = r;
  }

 private:
  ExprPtr unrolled(const Expr& reduce) {
    const ExprPtr& arg = reduce.args[0];
    const bool sum = reduce.op == OpId::Sum || reduce.op == OpId::Mean, prod = reduce.op == OpId::Prod;
    const DType acc = sum || prod ? DType::F64 : arg->dtype;
    const OpId combine = sum ? OpId::Add : prod ? OpId::Mul : reduce.op == OpId::Amax ? OpId::Maximum : OpId::Minimum;
    ExprPtr total;
    for (const std::vector<int64_t>& point : points_) {
      std::unordered_map<int64_t, IndexPtr> fixed;
      for (size_t d = 0; d < point.size(); ++d) fixed[first_ + static_cast<int64_t>(d)] = Index::constant(point[d]);
      ExprPtr value = castTo(VarSubstitution(std::move(fixed)).expr(arg), acc);
      total = total ? opOf(combine, acc, {total, value}) : value;
    }
    if (reduce.op == OpId::Mean)
      total = opOf(OpId::Div, acc, {total, constantOf(acc, static_cast<double>(points_.size()))});
    return castTo(total, reduce.dtype);
  }

  int64_t first_;
  std::vector<std::vector<int64_t>> points_;
  std::unordered_map<const Expr*, ExprPtr> done_;
};

bool onlyFloatReduces(const ExprPtr& e, std::unordered_map<const Expr*, bool>& seen) {
  if (auto it = seen.find(e.get()); it != seen.end()) return it->second;
  bool ok = e->kind != Expr::Kind::Reduce ||
            (isFloat(e->args[0]->dtype) && (e->op == OpId::Sum || e->op == OpId::Mean || e->op == OpId::Prod ||
                                            e->op == OpId::Amax || e->op == OpId::Amin));
  for (const ExprPtr& a : e->args) ok = ok && onlyFloatReduces(a, seen);
  return seen[e.get()] = ok;
}

}  // namespace

Kernel unrollSmallWindow(Kernel k) {
  if (k.kind != KernelKind::Reduction || k.gemm) return k;
  int64_t count = 1;
  for (const Dim& d : k.reduceSizes) {
    if (!d.isStatic()) return k;
    count *= d.size;
    if (count > kMaxUnrolledPoints) return k;
  }
  std::unordered_map<const Expr*, bool> seen;
  for (const Store& s : k.stores)
    if (s.insideReduction || !onlyFloatReduces(s.value, seen)) return k;
  // The window's points in loop order (the last reduce dim fastest).
  std::vector<std::vector<int64_t>> points;
  std::vector<int64_t> point(k.reduceSizes.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    points.push_back(point);
    for (size_t d = point.size(); d-- > 0;) {
      if (++point[d] < k.reduceSizes[d].size) break;
      point[d] = 0;
    }
  }
  Unroller unroller(static_cast<int64_t>(k.outer.size()), std::move(points));
  for (Store& s : k.stores) s.value = unroller.expr(s.value);
  k.kind = KernelKind::Pointwise;
  k.reduceSizes.clear();
  return k;
}

}  // namespace graphc::codegen::kernel
