// Lowering of fused ops to the kernel IR. Each body value is computed on
// demand at an index (one index expression per dim of the value's shape):
// parameters become loads, scalar constants constants, pointwise ops ops
// over their operands at broadcast indices, shape ops index maps,
// reductions Reduce nodes over the inner loops, the matmul of a
// matmul_epilogue kernel the GEMM accumulator (an attention kernel's
// first matmul the same, its softmax and second matmul a record the
// backend computes), and a window op
// (LowerWindows.cpp) a Reduce over its window. The fuse pass only forms
// groups whose shapes align with one loop nest (see loopsAlign in
// passes/FusePass.cpp); anything else is an ir::Error.
#include "codegen/kernel/Lowering.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "codegen/kernel/Lowerer.h"
#include "codegen/kernel/Substitute.h"
#include "ir/AttentionPattern.h"
#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"

namespace graphc::codegen::kernel {

using namespace ir;

namespace {

/// The value a constant of integer or bool dtype `t` holds, as the
/// reference interpreter stores it: an integer wraps to the dtype's width,
/// a float truncates toward zero and saturates (NaN becomes 0).
int64_t integerConstant(DType t, const Attribute& a) {
  if (t == DType::Bool) return a.asDouble() != 0;
  const int bits = dtypeSize(t) * 8;
  if (a.kind != Attribute::Kind::Float) {
    const int64_t v = a.kind == Attribute::Kind::Bool ? a.b : a.i;
    if (bits == 64) return v;
    const auto shift = static_cast<unsigned>(64 - bits);  // sign-extend the low bits
    return static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
  }
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1, min = -max - 1;
  const double bound = std::ldexp(1.0, bits - 1);  // exact in a double: 2^(bits-1)
  if (std::isnan(a.f)) return 0;
  if (a.f >= bound) return max;
  if (a.f <= -bound) return min;
  return static_cast<int64_t>(a.f);
}

}  // namespace

// ---- building expressions ------------------------------------------------------

ExprPtr constantOf(DType t, double v) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Const;
  e->dtype = t;
  if (isFloat(t))
    e->value = v;
  else
    e->intValue = t == DType::Bool ? v != 0 : static_cast<int64_t>(v);
  return e;
}

ExprPtr opOf(OpId op, DType t, std::vector<ExprPtr> args, AttrMap attrs) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Op;
  e->op = op;
  e->dtype = t;
  e->args = std::move(args);
  e->attrs = std::move(attrs);
  return e;
}

ExprPtr castTo(ExprPtr e, DType t) {
  if (e->dtype == t) return e;
  AttrMap attrs;
  attrs.set("dtype", Attribute::ofDType(t));
  return opOf(OpId::Cast, t, {std::move(e)}, std::move(attrs));
}

ExprPtr whereOf(ExprPtr condition, ExprPtr a, ExprPtr b) {
  const DType t = a->dtype;
  return opOf(OpId::Where, t, {std::move(condition), std::move(a), std::move(b)});
}

ExprPtr inBounds(Indices index, Indices sizes) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::InBounds;
  e->dtype = DType::Bool;
  e->index = std::move(index);
  e->sizes = std::move(sizes);
  return e;
}

ExprPtr indexValue(IndexPtr index, DType t) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::IndexValue;
  e->dtype = t;
  e->index = {std::move(index)};
  return e;
}

DType accumulationType(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

// ---- index maps ----------------------------------------------------------------

IndexPtr ravel(const Indices& idx, const Shape& shape) {
  IndexPtr linear = Index::constant(0);
  for (size_t k = 0; k < shape.size(); ++k) linear = add(mul(linear, Index::dim(shape[k])), idx[k]);
  return linear;
}

Indices unravel(const IndexPtr& linear, const Shape& shape) {
  Indices idx(shape.size());
  IndexPtr rest = linear;
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = k == 0 ? rest : mod(rest, Index::dim(shape[k]));
    rest = div(rest, Index::dim(shape[k]));
  }
  return idx;
}

Indices broadcast(const Indices& idx, const Shape& to, const Shape& from) {
  Indices out;
  const size_t offset = to.size() - from.size();
  for (size_t k = 0; k < from.size(); ++k)
    out.push_back(from[k].isStatic(1) && !to[k + offset].isStatic(1) ? Index::constant(0) : idx[k + offset]);
  return out;
}

bool isReduce(OpId op) {
  return op == OpId::Sum || op == OpId::Mean || op == OpId::Amax || op == OpId::Amin || op == OpId::Prod;
}

bool isWindow(OpId op) {
  return op == OpId::Conv || op == OpId::ConvTranspose || op == OpId::MaxPool || op == OpId::AvgPool ||
         op == OpId::Cumsum;
}

namespace {

/// Rebuilds every index of a lowered kernel with each loop variable's
/// static extent known, so that the constructors' rules can use it: a
/// reshape chain's ((i0·18 + i1)·16 + i2) / 288 becomes i0, and the loads
/// of a Tile read in0[i0 % 2, ...]. The expression DAG keeps its sharing.
Kernel simplifyIndices(Kernel k) {
  std::vector<int64_t> extents;
  for (const Dim& d : k.outer) extents.push_back(d.isStatic() ? d.size : 0);
  for (const Dim& d : k.reduceSizes) extents.push_back(d.isStatic() ? d.size : 0);
  if (k.gemm) {
    const Gemm& g = *k.gemm;
    if (static_cast<size_t>(g.kVar) >= extents.size()) extents.resize(static_cast<size_t>(g.kVar) + 1, 0);
    extents[static_cast<size_t>(g.kVar)] = g.k->kind == Index::Kind::Const ? g.k->value : 0;
  }
  std::unordered_map<int64_t, IndexPtr> withExtents;
  for (size_t v = 0; v < extents.size(); ++v)
    withExtents[static_cast<int64_t>(v)] = Index::var(static_cast<int64_t>(v), extents[v]);
  VarSubstitution substitution(std::move(withExtents));
  if (k.gemm) {
    for (IndexPtr& i : k.gemm->aIndex) i = substitution.index(i);
    for (IndexPtr& i : k.gemm->bIndex) i = substitution.index(i);
  }
  for (Store& s : k.stores) {
    for (IndexPtr& i : s.index) i = substitution.index(i);
    s.value = substitution.expr(s.value);
  }
  return k;
}

}  // namespace

Lowerer::Lowerer(const Node& fused, const LowerOptions& options)
    : fused_(fused), body_(*fused.regions()[0]), options_(options) {}

Kernel Lowerer::run() {
  k_.name = fused_.attrs.find("name")->s;
  for (size_t i = 0; i < body_.params().size(); ++i) {
    k_.inputs.push_back({fmt::format("in{}", i), body_.param(i)->type});
    inputOf_[body_.param(i)] = static_cast<int>(i);
  }
  for (size_t i = 0; i < body_.returns.size(); ++i)
    k_.outputs.push_back({fmt::format("out{}", i), body_.returns[i]->type});
  for (const auto& n : body_.nodes()) {
    if (!reduction_ && isReduce(n->op)) reduction_ = n.get();
    if (!matmul_ && (n->op == OpId::Matmul || n->op == OpId::Linear)) matmul_ = n.get();
    if (!window_ && isWindow(n->op)) window_ = n.get();
  }
  if (parseKernelKind(fused_.attrs.find("kind")->s) == KernelKind::Attention) {
    attentionKernel();
  } else if (matmul_) {
    gemmKernel();
  } else if (window_ && options_.convolutionsAsGemm && convolutionAsGemmFits(*window_)) {
    convolutionGemmKernel();
  } else if (window_) {
    windowKernel();
    if (options_.unrollSmallWindows) k_ = unrollSmallWindow(std::move(k_));
  } else if (reduction_) {
    reductionKernel();
  } else {
    pointwiseKernel();
  }
  if (options_.mergeShortInnerDims) k_ = mergeShortInnerDims(std::move(k_));
  return simplifyIndices(std::move(k_));
}

void Lowerer::pointwiseKernel() {
  k_.kind = KernelKind::Pointwise;
  const Shape& space = body_.returns[0]->type.shape;
  k_.outer = space;
  const IndexPtr linear = ravel(vars(space.size()), space);
  for (size_t i = 0; i < body_.returns.size(); ++i) {
    const Shape& s = body_.returns[i]->type.shape;
    // A result of another shape is stored at the same flat position.
    Indices idx = i == 0 || s == space ? vars(space.size()) : unravel(linear, s);
    k_.stores.push_back({static_cast<int>(i), idx, eval(body_.returns[i], idx), false});
  }
}

void Lowerer::reductionKernel() {
  k_.kind = KernelKind::Reduction;
  const Shape& full = reduction_->operands[0]->type.shape;
  reduced_ = rules::reducedAxes(reduction_->attrs, reduction_->operands[0]->type.rank());
  outerRank_ = full.size() - reduced_.size();
  for (size_t d = 0; d < full.size(); ++d) (isReduced(d) ? k_.reduceSizes : k_.outer).push_back(full[d]);
  for (size_t i = 0; i < body_.returns.size(); ++i) {
    const Shape& s = body_.returns[i]->type.shape;
    const bool perElement = s == full;
    Indices idx;
    if (perElement || s.size() == full.size()) {
      // Kept dims take the outer variables in order; reduced dims the inner
      // ones (per element) or 0 (a keepdim row result).
      size_t outer = 0, inner = 0;
      for (size_t d = 0; d < full.size(); ++d)
        idx.push_back(!isReduced(d) ? Index::var(static_cast<int64_t>(outer++))
                      : perElement  ? Index::var(static_cast<int64_t>(outerRank_ + inner++))
                                    : Index::constant(0));
    } else {
      idx = vars(outerRank_);
    }
    k_.stores.push_back({static_cast<int>(i), idx, eval(body_.returns[i], idx), perElement});
  }
  // Row results are stored once per row, before the loop over the row's elements.
  std::stable_partition(k_.stores.begin(), k_.stores.end(), [](const Store& s) { return !s.insideReduction; });
}

bool Lowerer::isReduced(size_t d) const {
  return std::find(reduced_.begin(), reduced_.end(), static_cast<int64_t>(d)) != reduced_.end();
}

void Lowerer::gemmKernel() {
  k_.kind = KernelKind::MatmulEpilogue;
  const Shape& out = matmul_->result()->type.shape;
  k_.outer = out;
  k_.gemm = gemmOf(*matmul_, vars(out.size()), static_cast<int64_t>(out.size()));
  const Indices o = vars(out.size());
  for (size_t i = 0; i < body_.returns.size(); ++i)
    k_.stores.push_back({static_cast<int>(i), o, eval(body_.returns[i], o), false});
}

Gemm Lowerer::gemmOf(const Node& n, const Indices& o, int64_t kVar) {
  const Shape& out = n.result()->type.shape;
  const Value* a = n.operands[0];
  const Value* b = n.operands[1];
  if (!inputOf_.count(a) || !inputOf_.count(b)) throw Error("kernel IR: a GEMM operand is computed in the kernel");
  Gemm g;
  g.a = inputOf_.at(a);
  g.b = inputOf_.at(b);
  g.kVar = kVar;
  const IndexPtr kv = Index::var(g.kVar);
  if (n.op == OpId::Linear) {
    g.transposeB = true;
    g.k = Index::dim(a->type.shape.back());
    g.aIndex.assign(o.begin(), o.end() - 1);
    g.aIndex.push_back(kv);
    g.bIndex = {o.back(), kv};
    return g;
  }
  const size_t ra = a->type.shape.size(), rb = b->type.shape.size();
  g.k = Index::dim(a->type.shape.back());
  // Output dims: batch..., [m if a is a matrix], [n if b is a matrix].
  const size_t batch = out.size() - (ra > 1) - (rb > 1);
  Indices batchIdx(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(batch));
  Shape batchShape(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(batch));
  if (ra > 1) {
    g.aIndex = broadcast(batchIdx, batchShape, Shape(a->type.shape.begin(), a->type.shape.end() - 2));
    g.aIndex.push_back(o[batch]);
  }
  g.aIndex.push_back(kv);
  if (rb > 1) {
    g.bIndex = broadcast(batchIdx, batchShape, Shape(b->type.shape.begin(), b->type.shape.end() - 2));
    g.bIndex.push_back(kv);
    g.bIndex.push_back(o.back());
  } else {
    g.bIndex = {kv};
  }
  return g;
}

void Lowerer::attentionKernel() {
  const std::optional<AttentionMatch> attention = matchAttention(body_);
  if (!attention)
    throw Error(
        "kernel IR: an attention kernel's body must be matmul(softmax(x), v), x pointwise ops of one other "
        "matmul (ir/AttentionPattern.h)");
  matmul_ = attention->scores;
  const Shape& scores = attention->softmax.input->type.shape;
  const Shape& product = matmul_->result()->type.shape;
  k_.kind = KernelKind::Attention;
  k_.outer = scores;
  // The product's point for each point of the scores: the same row-major
  // position (its batch dims may be regrouped, ir::regroupsBatchDims).
  accIndex_ = product == scores ? vars(scores.size()) : unravel(ravel(vars(scores.size()), scores), product);
  k_.gemm = gemmOf(*matmul_, accIndex_, static_cast<int64_t>(scores.size()));
  k_.attention = Attention{inputOf_.at(attention->values->operands[1]), attention->softmax.nanRowsToZero,
                           attention->softmax.minusInfRowsToZero};
  const Indices o = vars(scores.size());
  k_.stores.push_back({Store::kScores, o, eval(attention->softmax.input, o), false});
}

ExprPtr Lowerer::eval(const Value* v, const Indices& idx) {
  std::string key = fmt::format("{}@", static_cast<const void*>(v));
  for (const IndexPtr& i : idx) key += toString(i) + ",";
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  ExprPtr e = compute(v, idx);
  memo_[key] = e;
  return e;
}

ExprPtr Lowerer::compute(const Value* v, const Indices& idx) {
  auto e = std::make_shared<Expr>();
  e->dtype = v->type.dtype;
  if (auto it = inputOf_.find(v); it != inputOf_.end()) {
    e->kind = Expr::Kind::Load;
    e->buffer = it->second;
    e->index = idx;
    return e;
  }
  const Node& n = *v->definingNode();
  const Shape& shape = v->type.shape;
  if (n.op == OpId::Constant || n.op == OpId::Full) {
    // Only scalars and splats reach here (other constants are buffers).
    const std::optional<Attribute> value = firstElement(*n.attrs.find("value"));
    if (!value) throw Error("kernel IR: an empty constant read as a scalar");
    e->kind = Expr::Kind::Const;
    if (isFloat(e->dtype))
      e->value = value->asDouble();
    else
      e->intValue = integerConstant(e->dtype, *value);
    return e;
  }
  if (&n == matmul_) return gemmAccumulator(n, idx, e);
  if (&n == window_ && k_.gemm) return convolutionAccumulator(n, idx, e);
  if (&n == window_) {
    // Like the accumulator, the window's value exists for the outer point only.
    if (!sameIndex(idx, vars(shape.size())))
      throw Error("kernel IR: the epilogue reads a window op's result through an index map");
    return windowValue(n);
  }
  if (isReduce(n.op)) return reduction(n, idx);
  if (n.info().isPointwise()) {
    e->kind = Expr::Kind::Op;
    e->op = n.op;
    e->attrs = n.attrs;
    for (const Value* operand : n.operands)
      e->args.push_back(eval(operand, broadcast(idx, shape, operand->type.shape)));
    return e;
  }
  if (n.op == OpId::Concat) {
    // Operand k covers [start_k, start_k + size_k) of the concat dim.
    const int64_t d = *rules::normalizeAxis(n.attrs.find("dim")->i, static_cast<int64_t>(shape.size()));
    e->kind = Expr::Kind::Select;
    e->index = {idx[d]};
    IndexPtr start = Index::constant(0);
    for (const Value* operand : n.operands) {
      Indices shifted = idx;
      shifted[d] = add(idx[d], mul(Index::constant(-1), start));  // read only where idx[d] >= start
      e->args.push_back(eval(operand, shifted));
      start = add(start, Index::dim(operand->type.shape[d]));
      e->bounds.push_back(start);
    }
    return e;
  }
  if (n.op == OpId::IndexSelect || n.op == OpId::Gather || n.op == OpId::GatherNd) return indexed(n, idx);
  if (n.op == OpId::Resize) return resized(n, idx);
  if (n.op == OpId::Iota) return iota(n, idx);
  return eval(n.operands[0], shapeOpIndex(n, idx));
}

ExprPtr Lowerer::gemmAccumulator(const Node& n, const Indices& idx, std::shared_ptr<Expr> e) {
  // The accumulator holds the element being stored and no other.
  if (!sameIndex(idx, accIndex_.empty() ? vars(n.result()->type.rank()) : accIndex_))
    throw Error("kernel IR: the epilogue reads the matmul result through an index map");
  e->kind = Expr::Kind::Acc;
  if (n.op != OpId::Linear || n.operands.size() != 3) return e;
  // The bias is part of linear: it joins the accumulator before the one
  // rounding to the result dtype (f16/bf16 accumulate in f32).
  const DType resultType = e->dtype, accType = accumulationType(resultType);
  e->dtype = accType;
  ExprPtr biased = opOf(OpId::Add, accType, {e, castTo(eval(n.operands[2], {idx.back()}), accType)});
  return castTo(biased, resultType);
}

ExprPtr Lowerer::reduction(const Node& n, const Indices& idx) {
  // The reduction loop binds the inner variables; the outer ones come
  // from idx (which has the reduced dims as 1s with keepdim, else not).
  const Value* in = n.operands[0];
  const std::vector<int64_t> dims = rules::reducedAxes(n.attrs, in->type.rank());
  const bool keep = n.result()->type.rank() == in->type.rank();
  Indices inIdx;
  size_t kept = 0, inner = 0;
  for (int64_t d = 0; d < in->type.rank(); ++d) {
    const bool reducedHere = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (reducedHere)
      inIdx.push_back(Index::var(static_cast<int64_t>(outerRank_ + inner++)));
    else
      inIdx.push_back(keep ? idx[static_cast<size_t>(d)] : idx[kept]);
    if (!reducedHere) ++kept;
  }
  // A row value exists only for the row the loop is at.
  Indices rowIdx;
  for (int64_t d = 0; d < in->type.rank(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) rowIdx.push_back(inIdx[static_cast<size_t>(d)]);
  if (!sameIndex(rowIdx, vars(rowIdx.size()))) throw Error("kernel IR: a reduction is read through an index map");
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Reduce;
  e->dtype = n.result()->type.dtype;
  e->op = n.op;
  e->args = {eval(in, inIdx)};
  return e;
}

bool Lowerer::sameIndex(const Indices& a, const Indices& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const IndexPtr& x, const IndexPtr& y) { return toString(x) == toString(y); });
}

Indices Lowerer::shapeOpIndex(const Node& n, const Indices& idx) {
  const Shape& in = n.operands[0]->type.shape;
  const Shape& out = n.result()->type.shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  switch (n.op) {
    case OpId::Reshape:
    case OpId::Squeeze:
    case OpId::Unsqueeze: return unravel(ravel(idx, out), in);
    case OpId::Permute:
    case OpId::Transpose: {
      std::vector<int64_t> perm(static_cast<size_t>(rank));
      if (n.op == OpId::Permute) {
        for (int64_t k = 0; k < rank; ++k) perm[k] = *rules::normalizeAxis(n.attrs.find("dims")->list[k].i, rank);
      } else {
        for (int64_t k = 0; k < rank; ++k) perm[k] = k;
        std::swap(perm[*rules::normalizeAxis(n.attrs.find("dim0")->i, rank)],
                  perm[*rules::normalizeAxis(n.attrs.find("dim1")->i, rank)]);
      }
      Indices r(static_cast<size_t>(rank));
      for (int64_t k = 0; k < rank; ++k) r[perm[k]] = idx[k];
      return r;
    }
    case OpId::Expand: return broadcast(idx, out, in);
    case OpId::Slice: {
      const int64_t d = *rules::normalizeAxis(n.attrs.find("dim")->i, rank);
      const Attribute* startAttr = n.attrs.find("start");
      const Attribute* stepAttr = n.attrs.find("step");
      const int64_t start = startAttr ? startAttr->i : 0;
      const int64_t step = stepAttr ? stepAttr->i : 1;
      IndexPtr first = nullptr;
      if (in[d].isStatic()) {
        // Python's bounds, for either sign; a negative step (static dims
        // only) reads first - |step|·i, non-negative over the result's
        // range (Index.h: every index is).
        first = Index::constant(rules::staticSlice(n.attrs, in[d].size).first);
      } else if (start < 0) {  // S + start, which the binding checks is >= 0 (the type rule's static size)
        const Kernel::MinimumSize need{in[d], -start};
        const bool empty = n.result()->type.shape[static_cast<size_t>(d)].isStatic(0);
        if (!empty && std::find(k_.minimumSizes.begin(), k_.minimumSizes.end(), need) == k_.minimumSizes.end())
          k_.minimumSizes.push_back(need);
        first = add(Index::dim(in[d]), Index::constant(start));
      } else {
        first = Index::constant(start);
      }
      Indices r = idx;
      r[d] = add(first, mul(Index::constant(step), idx[d]));
      return r;
    }
    default: throw Error(fmt::format("kernel IR: '{}' cannot be part of a fused kernel", n.name()));
  }
}

Kernel lower(const Node& fused, const LowerOptions& options) {
  if (fused.op != OpId::Fused) throw Error("kernel IR: only fused ops lower to kernels");
  return Lowerer(fused, options).run();
}

}  // namespace graphc::codegen::kernel
