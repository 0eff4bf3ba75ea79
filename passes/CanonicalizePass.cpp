// canonicalize: local simplifications, repeated until none applies, then a
// sweep of the nodes they left dead. In every region:
//
//  constant folding  a pointwise or shape op whose operands are all constants
//                    (constant or static full) and whose result has at most
//                    kMaxFoldElements elements becomes one constant, computed
//                    by the reference interpreter — one definition of each
//                    op's meaning, as XLA folds with its HloEvaluator; a
//                    shape op on a constant nothing else reads folds at any
//                    size (a weight's transpose: the new constant replaces
//                    the old, so the weights do not grow, and the GEMM
//                    after it gets a constant it packs once);
//  splats            a constant whose elements are all equal becomes `full`,
//                    and expand of a full (a broadcast scalar) becomes a
//                    larger full;
//  identities        x*1, 1*x, x/1, x+0, 0+x, x-0 → x; neg(neg(x)) → x;
//                    cast to x's own dtype → x; reshape or expand to x's own
//                    type → x; a slice taking a whole dim → x;
//  shape chains      reshape(reshape(x)) → reshape(x); transpose(transpose(x))
//                    over the same dims → x; permute(permute(x)) → one
//                    permute, or x when the two cancel; an identity permute
//                    or transpose → x;
//  batched matmul    reshape(matmul(reshape(a), reshape(b))) → matmul(a, b)
//                    when the reshapes only regroup the batch dims (torch's
//                    decomposition of a 4-D matmul into bmm: [B, H, S, D]
//                    flattened to [B·H, S, D] and back), so the product's
//                    batch dims are the model's again and no copy is made
//                    to flatten its operands;
//  linear            matmul(x, permute(w)) of a 2-D w, [1, 0] → linear(x, w):
//                    the GEMM reads w as [out, in] where it is (a weight
//                    that is an input, as in training, when nothing folds
//                    its transpose), instead of a transposed copy of it;
//  transposed A      matmul(permute(a), b) of 2-D a [k, m] and b [k, n]
//                    (static) → permute(matmul(permute(b), a)) when m·k >
//                    n·k + m·n: Aᵀ·B = (Bᵀ·A)ᵀ, so the copies transpose the
//                    smaller B and the result instead of A (a weight's
//                    gradient gᵀ·x in training, g the logits' gradient
//                    [tokens, vocabulary], x the hidden states [tokens, d]);
//  scalar splats     a pointwise op's `full` operand whose shape the other
//                    operands already give the result (where(c, zeros[B, H,
//                    S, S], p)) becomes a rank-0 full: nothing materialises
//                    it.
//
// A rule fires only where the replacement has exactly the replaced value's
// type, so broadcasting adds (x[4] + zeros[3, 4]) stay. Changed: some rule
// fired.
#include <unordered_map>

#include "ir/AttentionPattern.h"
#include "ir/Builder.h"
#include "ir/ShapeRules.h"
#include "passes/Passes.h"
#include "passes/RegionSweep.h"
#include "passes/RewriteUtils.h"
#include "runtime/reference/Constants.h"
#include "runtime/reference/Interpreter.h"

namespace graphc::passes {

namespace {

using ir::OpId;

constexpr int64_t kMaxFoldElements = 1024;

bool isSplatOf(const ir::Value* v, double x) {
  auto s = splatValue(v);
  return s && *s == x;
}

std::vector<int64_t> permutationOf(const ir::Node& n) {
  const int64_t rank = n.operands[0]->type.rank();
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  if (n.op == OpId::Permute) {
    const auto& dims = n.attrs.find("dims")->list;
    for (int64_t k = 0; k < rank; ++k) perm[k] = *ir::rules::normalizeAxis(dims[k].i, rank);
  } else {  // transpose
    for (int64_t k = 0; k < rank; ++k) perm[k] = k;
    std::swap(perm[*ir::rules::normalizeAxis(n.attrs.find("dim0")->i, rank)],
              perm[*ir::rules::normalizeAxis(n.attrs.find("dim1")->i, rank)]);
  }
  return perm;
}

bool isIdentity(const std::vector<int64_t>& perm) {
  for (size_t k = 0; k < perm.size(); ++k)
    if (perm[k] != static_cast<int64_t>(k)) return false;
  return true;
}

class Canonicalizer {
 public:
  explicit Canonicalizer(ir::Region& r) : region_(r) {}

  bool run() {
    bool changed = false;
    for (const auto& n : region_.nodes())
      for (const auto& inner : n->regions()) changed |= Canonicalizer(*inner).run();
    for (bool again = true; again;) {
      again = false;
      RegionSweep sweep(region_);
      sweep_ = &sweep;
      while (ir::Node* n = sweep.next()) again |= rewrite(*n);
      sweep_ = nullptr;
      changed |= again;
    }
    changed |= removeDeadNodes(region_);
    return changed;
  }

 private:
  /// Tries each rule on `n`, the sweep's current node; true when one fired.
  /// A replacement goes in just before n, and n is dropped at once so that
  /// rules do not fire on it again.
  bool rewrite(ir::Node& n) {
    if (n.numResults() != 1 || !n.regions().empty()) return false;
    ir::Value* result = n.result();
    const size_t pos = sweep_->position();
    ir::Value* replacement = nullptr;
    if (ir::Value* same = identity(n); same && same->type == result->type)
      replacement = same;
    else if (!(replacement = replaceByNewNode(n, pos)) && !(replacement = fold(n, pos)) &&
             !(replacement = transposedA(n, pos)))
      replacement = scalarSplats(n, pos);
    if (!replacement) return false;
    sweep_->replace(result, replacement);
    sweep_->dropCurrent();
    return true;
  }

  /// Rules whose answer is an existing value.
  ir::Value* identity(ir::Node& n) {
    ir::Value* x = n.operands.empty() ? nullptr : n.operands[0];
    const ir::Node* producer = x ? x->definingNode() : nullptr;
    switch (n.op) {
      case OpId::Mul:
        if (isSplatOf(n.operands[1], 1)) return x;
        if (isSplatOf(x, 1)) return n.operands[1];
        return nullptr;
      case OpId::Add:
        if (isSplatOf(n.operands[1], 0)) return x;
        if (isSplatOf(x, 0)) return n.operands[1];
        return nullptr;
      case OpId::Sub: return isSplatOf(n.operands[1], 0) ? x : nullptr;
      case OpId::Div: return isSplatOf(n.operands[1], 1) ? x : nullptr;
      case OpId::Neg: return producer && producer->op == OpId::Neg ? producer->operands[0] : nullptr;
      case OpId::Cast:
      case OpId::Reshape:
      case OpId::Expand:
      case OpId::Squeeze: return x;  // fires only when the types already agree
      case OpId::Slice: {
        const ir::Attribute* step = n.attrs.find("step");
        return (!step || step->i == 1) ? x : nullptr;  // same type and step 1: the whole dim
      }
      case OpId::Permute:
      case OpId::Transpose: {
        if (isIdentity(permutationOf(n))) return x;
        if (producer && (producer->op == OpId::Permute || producer->op == OpId::Transpose)) {
          std::vector<int64_t> inner = permutationOf(*producer), outer = permutationOf(n);
          std::vector<int64_t> composed(outer.size());
          for (size_t k = 0; k < outer.size(); ++k) composed[k] = inner[outer[k]];
          if (isIdentity(composed)) return producer->operands[0];
        }
        return nullptr;
      }
      default: return nullptr;
    }
  }

  /// Rules whose answer is one new node in place of `n`, inserted at `pos`.
  ir::Value* replaceByNewNode(ir::Node& n, size_t pos) {
    const ir::Node* producer = n.operands.empty() ? nullptr : n.operands[0]->definingNode();
    ir::AttrMap attrs;
    std::vector<ir::Value*> operands;
    OpId op;
    if (n.op == OpId::Constant && n.result()->type.rank() > 0 && splatValue(n.result())) {
      op = OpId::Full;
      attrs.set("value", *ir::firstElement(*n.attrs.find("value")));  // a splat has one
    } else if (n.op == OpId::Expand && producer && producer->op == OpId::Full) {
      op = OpId::Full;
      attrs = producer->attrs;
    } else if (n.op == OpId::Reshape && producer && producer->op == OpId::Reshape) {
      op = OpId::Reshape;
      operands = {producer->operands[0]};
      attrs = n.attrs;
    } else if (ir::Value* a = nullptr, *b = nullptr; batchedMatmul(n, a, b)) {
      op = OpId::Matmul;
      operands = {a, b};
    } else if (ir::Value* w = transposedWeight(n)) {
      op = OpId::Linear;
      operands = {n.operands[0], w};
    } else if ((n.op == OpId::Permute || n.op == OpId::Transpose) && producer &&
               (producer->op == OpId::Permute || producer->op == OpId::Transpose)) {
      std::vector<int64_t> inner = permutationOf(*producer), outer = permutationOf(n);
      std::vector<int64_t> composed(outer.size());
      for (size_t k = 0; k < outer.size(); ++k) composed[k] = inner[outer[k]];
      op = OpId::Permute;
      operands = {producer->operands[0]};
      attrs.set("dims", ir::Attribute::ofInts(composed));
    } else {
      return nullptr;
    }
    ir::Node* fresh = insertNode(region_, pos, op, operands, attrs, {n.result()->type}, n.loc);
    sweep_->addUses(*fresh);
    return fresh->result();
  }

  /// Whether `n` is reshape(matmul(reshape(a), reshape(b))) with every
  /// reshape regrouping batch dims only and a, b of n's batch dims (no
  /// broadcasting), the product read by n alone; sets a and b.
  bool batchedMatmul(const ir::Node& n, ir::Value*& a, ir::Value*& b) {
    const ir::Node* product = n.op == OpId::Reshape ? n.operands[0]->definingNode() : nullptr;
    if (!product || product->op != OpId::Matmul || !ir::regroupsBatchDims(n) || sweep_->uses(n.operands[0]) != 1)
      return false;
    const ir::Node* ra = product->operands[0]->definingNode();
    const ir::Node* rb = product->operands[1]->definingNode();
    if (!ra || !rb || !ir::regroupsBatchDims(*ra) || !ir::regroupsBatchDims(*rb)) return false;
    a = ra->operands[0];
    b = rb->operands[0];
    const ir::Shape& out = n.result()->type.shape;
    auto batchOf = [](const ir::Shape& s) { return ir::Shape(s.begin(), s.end() - 2); };
    return a->type.rank() == static_cast<int64_t>(out.size()) && b->type.rank() == a->type.rank() &&
           batchOf(a->type.shape) == batchOf(out) && batchOf(b->type.shape) == batchOf(out);
  }

  /// w when `n` is matmul(x, permute(w)) with w 2-D and not a constant
  /// (a constant's transpose folds into a new constant, which the GEMM
  /// packs once) and x of rank 2 or more: linear(x, w).
  static ir::Value* transposedWeight(const ir::Node& n) {
    if (n.op != OpId::Matmul || n.operands[0]->type.rank() < 2) return nullptr;
    ir::Value* w = matrixTransposed(n.operands[1]);
    const ir::Node* source = w ? w->definingNode() : nullptr;
    return source && source->op == OpId::Constant ? nullptr : w;
  }

  /// m when `v` is permute(m, [1, 0]) or its transpose of a 2-D m.
  static ir::Value* matrixTransposed(const ir::Value* v) {
    const ir::Node* t = v->definingNode();
    if (v->type.rank() != 2 || !t || (t->op != OpId::Permute && t->op != OpId::Transpose)) return nullptr;
    return permutationOf(*t) == std::vector<int64_t>{1, 0} ? t->operands[0] : nullptr;
  }

  /// matmul(permute(a), b) → permute(matmul(permute(b), a)) where that
  /// transposes fewer elements (see the file comment): the new nodes at
  /// `pos`, the last one's result, or nullptr.
  ir::Value* transposedA(ir::Node& n, size_t pos) {
    if (n.op != OpId::Matmul || n.operands[1]->type.rank() != 2) return nullptr;
    ir::Value* a = matrixTransposed(n.operands[0]);
    if (!a) return nullptr;
    ir::Value* b = n.operands[1];
    const ir::Shape& as = a->type.shape;
    const ir::Shape& bs = b->type.shape;
    if (!as[0].isStatic() || !as[1].isStatic() || !bs[1].isStatic()) return nullptr;
    const int64_t k = as[0].size, m = as[1].size, cols = bs[1].size;
    if (m * k <= cols * k + m * cols) return nullptr;
    ir::AttrMap swap;
    swap.set("dims", ir::Attribute::ofInts({1, 0}));
    const ir::DType dtype = n.result()->type.dtype;
    ir::Node* bt = insertNode(region_, pos, OpId::Permute, {b}, swap, {{dtype, {bs[1], bs[0]}}}, n.loc);
    ir::Node* product =
        insertNode(region_, pos + 1, OpId::Matmul, {bt->result(), a}, {}, {{dtype, {bs[1], as[1]}}}, n.loc);
    ir::Node* result =
        insertNode(region_, pos + 2, OpId::Permute, {product->result()}, swap, {n.result()->type}, n.loc);
    for (ir::Node* fresh : {bt, product, result}) sweep_->addUses(*fresh);
    return result->result();
  }

  /// A pointwise op's `full` operands of rank > 0 whose shape the other
  /// operands already give the result, as rank-0 fulls: a new op in place
  /// of `n`, after the new fulls, inserted at `pos`.
  ir::Value* scalarSplats(ir::Node& n, size_t pos) {
    if (!n.info().isPointwise()) return nullptr;
    std::vector<ir::Value*> operands = n.operands;
    bool changed = false;
    for (size_t k = 0; k < operands.size(); ++k) {
      const ir::Node* full = operands[k]->definingNode();
      if (!full || full->op != OpId::Full || operands[k]->type.rank() == 0) continue;
      std::optional<ir::Shape> others = ir::Shape{};  // the other operands' broadcast
      std::string error;
      for (size_t j = 0; j < operands.size() && others; ++j)
        if (j != k) others = ir::rules::broadcastShapes(*others, operands[j]->type.shape, error);
      if (!others || *others != n.result()->type.shape) continue;
      ir::Node* scalar = insertNode(region_, pos++, OpId::Full, {}, full->attrs,
                                    {ir::TensorType{operands[k]->type.dtype, {}}}, full->loc);
      sweep_->addUses(*scalar);
      operands[k] = scalar->result();
      changed = true;
    }
    if (!changed) return nullptr;
    ir::Node* fresh = insertNode(region_, pos, n.op, operands, n.attrs, {n.result()->type}, n.loc);
    fresh->result()->name = n.result()->name;  // the same value, computed from smaller operands
    sweep_->addUses(*fresh);
    return fresh->result();
  }

  /// n evaluated, when its operands are constants, as a constant inserted
  /// at `pos`.
  ir::Value* fold(ir::Node& n, size_t pos) {
    const ir::OpInfo& info = n.info();
    if (!(info.isPointwise() || info.category == ir::OpCategory::Shape) || n.operands.empty()) return nullptr;
    for (const ir::Value* v : n.operands) {
      const ir::Node* producer = v->definingNode();
      if (!producer || (producer->op != OpId::Constant && producer->op != OpId::Full)) return nullptr;
    }
    auto count = n.result()->type.staticNumElements();
    // A layout change of a constant nothing else reads moves its data
    // rather than duplicating it, so it folds whatever its size.
    const bool ownedLayout =
        info.category == ir::OpCategory::Shape && n.operands.size() == 1 && sweep_->uses(n.operands[0]) == 1;
    const int64_t limit = ownedLayout ? INT64_MAX : kMaxFoldElements;
    if (!count || *count > limit) return nullptr;
    std::vector<runtime::Tensor> operands;
    for (const ir::Value* v : n.operands) {
      auto t = runtime::constantTensor(v);
      if (!t || t->numel() > limit) return nullptr;
      operands.push_back(*t);
    }
    runtime::Tensor value;
    try {
      value = runtime::evaluateNode(n, operands, {runtime::concreteShape(n.result()->type)})[0];
    } catch (const ir::Error&) {
      return nullptr;  // e.g. an index out of range: reported when the graph runs
    }
    return insertConstant(region_, pos, value, n.loc);
  }

  ir::Region& region_;
  RegionSweep* sweep_ = nullptr;  // the sweep run() is in
};

}  // namespace

PassResult CanonicalizePass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {Canonicalizer(g.body).run(), false}; }

}  // namespace graphc::passes
