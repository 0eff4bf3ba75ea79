// Lowering of the window ops: each output element is a Reduce over its
// window, the window's coordinates the kernel's inner loops.
//
//   conv            inner loops [C/groups, *kernel]: Σ x[n, g·C/g + c, o·s − p + k·d] · w[m, c, k]
//   conv_transpose  inner loops [C/groups, *kernel], kernel points reversed (r = K−1−k):
//                   t = o + r·d + c0 ≥ 0 with c0 = p + B·s − (K−1)·d; the input point
//                   t/s − B exists where s divides t (the scatter as a gather)
//   max_pool        inner loops [*kernel]: amax of x at o·s − p + k·d (−inf in the padding)
//   avg_pool        the sum over the window, divided by its count (the positions in the
//                   input, or in the padded input with count_include_pad)
//   cumsum          inner loop [n] over the dim: Σ x[..j..] where j ≤ i (j < i exclusive;
//                   reversed: j ≥ i)
//
// A position that may fall outside the input is read at its clamped index
// under an InBounds guard; dims whose windows never leave the input get no
// guard. Sums accumulate in f32 (f64 for f64) and round once.
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "codegen/kernel/Lowerer.h"
#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"

namespace graphc::codegen::kernel {

using namespace ir;

namespace {

rules::WindowGeometry geometryOf(const Node& n, size_t spatial) {
  AttrMap attrs = n.attrs;
  if (const Attribute* kernel = n.attrs.find("kernel"); kernel && !attrs.find("stride"))
    attrs.set("stride", *kernel);  // pools: the stride defaults to the kernel
  std::string error;
  rules::WindowGeometry g = rules::windowGeometry(n.info(), attrs, spatial, error);
  if (!g.valid) throw Error("kernel IR: " + error);
  return g;
}

std::vector<int64_t> kernelOf(const Node& n) {
  std::vector<int64_t> k;
  if (const Attribute* kernel = n.attrs.find("kernel")) {
    for (const Attribute& a : kernel->list) k.push_back(a.i);
  } else {
    const Shape& w = n.operands[1]->type.shape;
    for (size_t d = 2; d < w.size(); ++d) k.push_back(w[d].size);
  }
  return k;
}

int64_t groupsOf(const Node& n) {
  const Attribute* g = n.attrs.find("groups");
  return g ? g->i : 1;
}

IndexPtr c(int64_t v) { return Index::constant(v); }

}  // namespace

std::vector<Dim> Lowerer::windowLoops(const Node& n) {
  std::vector<Dim> loops;
  if (n.op == OpId::Cumsum) {  // the summed dim (a scalar's one element)
    const Shape& x = n.operands[0]->type.shape;
    if (x.empty()) return {Dim::of(1)};
    loops.push_back(x[static_cast<size_t>(*rules::normalizeAxis(n.attrs.find("dim")->i, x.size()))]);
    return loops;
  }
  if (n.op == OpId::Conv || n.op == OpId::ConvTranspose)
    loops.push_back(Dim::of(n.operands[0]->type.shape[1].size / groupsOf(n)));  // input channels of a group
  for (int64_t k : kernelOf(n)) loops.push_back(Dim::of(k));
  return loops;
}

void Lowerer::windowKernel() {
  k_.kind = KernelKind::Reduction;
  k_.outer = window_->result()->type.shape;
  k_.reduceSizes = windowLoops(*window_);
  outerRank_ = k_.outer.size();
  for (size_t i = 0; i < body_.returns.size(); ++i) {
    const Shape& s = body_.returns[i]->type.shape;
    if (s != window_->result()->type.shape)
      throw Error("kernel IR: a window kernel stores a result of another shape than its window op's");
    Indices idx = vars(s.size());
    k_.stores.push_back({static_cast<int>(i), idx, eval(body_.returns[i], idx), false});
  }
}

ExprPtr Lowerer::windowValue(const Node& n) {
  switch (n.op) {
    case OpId::Conv: return convolution(n);
    case OpId::ConvTranspose: return transposedConvolution(n);
    case OpId::MaxPool:
    case OpId::AvgPool: return pooling(n);
    case OpId::Cumsum: return cumulativeSum(n);
    default: throw Error(fmt::format("kernel IR: '{}' is not a window op", n.name()));
  }
}

ExprPtr Lowerer::paddedRead(const Value* x, Indices idx, const Indices& guarded, const Indices& sizes, double pad) {
  ExprPtr value = eval(x, idx);
  if (guarded.empty()) return value;
  return whereOf(inBounds(guarded, sizes), value, constantOf(value->dtype, pad));
}

namespace {

/// The input positions of a forward window (conv, pools) along each
/// spatial dim, o·s − pb + k·d, with the guards they need: the index to
/// read (clamped where it may leave the input) and the InBounds terms.
struct WindowReads {
  Indices at, guarded, sizes;
};

WindowReads forwardReads(const Shape& in, const Shape& out, const std::vector<int64_t>& kernel,
                         const rules::WindowGeometry& g, const Indices& outer, size_t firstKernelVar) {
  WindowReads r;
  for (size_t k = 0; k < kernel.size(); ++k) {
    const int64_t size = in[2 + k].size;
    const IndexPtr kv = Index::var(static_cast<int64_t>(firstKernelVar + k));
    IndexPtr pos = add(add(mul(outer[2 + k], c(g.stride[k])), mul(kv, c(g.dilation[k]))), c(-g.padBegin[k]));
    const int64_t last = (out[2 + k].size - 1) * g.stride[k] + (kernel[k] - 1) * g.dilation[k] - g.padBegin[k];
    if (g.padBegin[k] > 0 || last >= size) {
      r.guarded.push_back(pos);
      r.sizes.push_back(c(size));
      pos = clamp(pos, c(size));
    }
    r.at.push_back(pos);
  }
  return r;
}

}  // namespace

/// What both convolutions compute from their input and weight reads:
/// sum over the window of input · weight in the accumulation type, plus
/// the bias of the output channel, cast to the result's dtype.
ExprPtr Lowerer::convolutionSum(const Node& n, ExprPtr input, ExprPtr weight, const IndexPtr& outChannel) {
  const DType t = n.result()->type.dtype, acc = accumulationType(t);
  auto sum = std::make_shared<Expr>();
  sum->kind = Expr::Kind::Reduce;
  sum->op = OpId::Sum;
  sum->dtype = acc;
  sum->args = {opOf(OpId::Mul, acc, {castTo(std::move(input), acc), castTo(std::move(weight), acc)})};
  ExprPtr r = sum;
  if (n.operands.size() == 3) r = opOf(OpId::Add, acc, {r, castTo(eval(n.operands[2], {outChannel}), acc)});
  return castTo(r, t);
}

ExprPtr Lowerer::convolution(const Node& n) {
  const Value* x = n.operands[0];
  const Value* w = n.operands[1];
  const std::vector<int64_t> kernel = kernelOf(n);
  const rules::WindowGeometry g = geometryOf(n, kernel.size());
  const Indices o = vars(outerRank_);
  const int64_t groups = groupsOf(n);
  const int64_t inPerGroup = x->type.shape[1].size / groups, outPerGroup = n.result()->type.shape[1].size / groups;
  const IndexPtr ci = Index::var(static_cast<int64_t>(outerRank_));
  const IndexPtr channel = groups == 1 ? ci : add(mul(div(o[1], c(outPerGroup)), c(inPerGroup)), ci);
  WindowReads reads = forwardReads(x->type.shape, n.result()->type.shape, kernel, g, o, outerRank_ + 1);
  Indices xIdx = {o[0], channel}, wIdx = {o[1], ci};
  xIdx.insert(xIdx.end(), reads.at.begin(), reads.at.end());
  for (size_t k = 0; k < kernel.size(); ++k) wIdx.push_back(Index::var(static_cast<int64_t>(outerRank_ + 1 + k)));
  return convolutionSum(n, paddedRead(x, xIdx, reads.guarded, reads.sizes, 0), eval(w, wIdx), o[1]);
}

ExprPtr Lowerer::transposedConvolution(const Node& n) {
  const Value* x = n.operands[0];
  const Value* w = n.operands[1];
  const std::vector<int64_t> kernel = kernelOf(n);
  const rules::WindowGeometry g = geometryOf(n, kernel.size());
  const Indices o = vars(outerRank_);
  const int64_t groups = groupsOf(n);
  const int64_t inPerGroup = x->type.shape[1].size / groups, outPerGroup = n.result()->type.shape[1].size / groups;
  const IndexPtr ci = Index::var(static_cast<int64_t>(outerRank_));
  const IndexPtr channel = groups == 1 ? ci : add(mul(div(o[1], c(outPerGroup)), c(inPerGroup)), ci);
  const IndexPtr outChannel = groups == 1 ? o[1] : mod(o[1], c(outPerGroup));
  Indices xIdx = {o[0], channel}, wIdx = {channel, outChannel}, guarded, sizes;
  for (size_t k = 0; k < kernel.size(); ++k) {
    const int64_t s = g.stride[k], d = g.dilation[k], size = x->type.shape[2 + k].size;
    const int64_t reach = (kernel[k] - 1) * d;
    const int64_t before = (std::max<int64_t>(reach - g.padBegin[k], 0) + s - 1) / s;  // B
    const IndexPtr r = Index::var(static_cast<int64_t>(outerRank_ + 1 + k));
    const IndexPtr t = add(add(o[2 + k], mul(r, c(d))), c(g.padBegin[k] + before * s - reach));
    const IndexPtr i = add(div(t, c(s)), c(-before));
    if (s > 1) {
      guarded.push_back(mod(t, c(s)));  // s divides t
      sizes.push_back(c(1));
    }
    guarded.push_back(i);
    sizes.push_back(c(size));
    xIdx.push_back(clamp(i, c(size)));
    wIdx.push_back(add(c(kernel[k] - 1), mul(r, c(-1))));
  }
  return convolutionSum(n, paddedRead(x, xIdx, guarded, sizes, 0), eval(w, wIdx), o[1]);
}

bool Lowerer::poolAsPlanesFits(const Node& n) const {
  if ((n.op != OpId::MaxPool && n.op != OpId::AvgPool) || n.result()->type.dtype != DType::F32) return false;
  const Value* x = n.operands[0];
  if (x->type.dtype != DType::F32 || !inputOf_.count(x) || x->type.shape.size() != 4) return false;
  for (size_t d = 1; d < 4; ++d)
    if (!x->type.shape[d].isStatic() || x->type.shape[d].size == 0 || !n.result()->type.shape[d].isStatic())
      return false;
  return true;
}

bool Lowerer::convolutionAsGemmFits(const Node& n) const {
  if (poolAsPlanesFits(n)) return true;
  if ((n.op != OpId::Conv && n.op != OpId::ConvTranspose) || n.result()->type.dtype != DType::F32) return false;
  const Value* x = n.operands[0];
  const Value* w = n.operands[1];
  // A transposed convolution of groups 1; a convolution of any groups.
  if (groupsOf(n) != 1 && n.op != OpId::Conv) return false;
  if (x->type.dtype != DType::F32 || w->type.dtype != DType::F32 || !inputOf_.count(x) || !inputOf_.count(w))
    return false;
  const size_t rank = x->type.shape.size();
  if (rank < 3 || rank > 5) return false;
  // Everything but the batch static (the packing's loops are planned from it).
  auto staticFrom = [](const Shape& s, size_t first) {
    for (size_t d = first; d < s.size(); ++d)
      if (!s[d].isStatic() || s[d].size == 0) return false;
    return true;
  };
  return staticFrom(x->type.shape, 1) && staticFrom(w->type.shape, 0) && staticFrom(n.result()->type.shape, 1);
}

void Lowerer::convolutionGemmKernel() {
  const Node& n = *window_;
  k_.kind = KernelKind::MatmulEpilogue;
  k_.outer = n.result()->type.shape;
  outerRank_ = k_.outer.size();
  const Shape& x = n.operands[0]->type.shape;
  ConvAsGemm conv;
  const bool pool = n.op == OpId::MaxPool || n.op == OpId::AvgPool;
  const int64_t groups = groupsOf(n);
  conv.channels = x[1].size;
  conv.outChannels = k_.outer[1].size;
  // One output channel per input channel: the depthwise kernel.
  conv.depthwise = groups > 1 && groups == conv.channels && groups == conv.outChannels;
  conv.groups = conv.depthwise ? 1 : groups;
  conv.transposed = n.op == OpId::ConvTranspose;
  conv.kernel = kernelOf(n);
  const rules::WindowGeometry g = geometryOf(n, conv.kernel.size());
  if (pool) {  // each channel on its own, as depthwise, with no filters
    conv.depthwise = true;
    conv.groups = 1;
    conv.pool = n.op == OpId::MaxPool ? PoolKind::Max : PoolKind::Average;
    const Attribute* includePad = n.attrs.find("count_include_pad");
    conv.countIncludePad = includePad && includePad->b;
    conv.padEnd = g.padEnd;
  }
  // The reduction: each window's channels and points; transposed, the
  // input channels (the kernel points are the GEMM's rows).
  int64_t k = conv.depthwise ? 1 : conv.channels / conv.groups;
  for (size_t d = 0; d < conv.kernel.size(); ++d) {
    conv.in.push_back(x[2 + d].size);
    conv.out.push_back(k_.outer[2 + d].size);
    if (!conv.transposed) k *= conv.kernel[d];
  }
  conv.stride = g.stride;
  conv.dilation = g.dilation;
  conv.padBegin = g.padBegin;
  Gemm gemm;
  gemm.b = inputOf_.at(n.operands[0]);
  gemm.a = pool ? gemm.b : inputOf_.at(n.operands[1]);
  gemm.k = Index::constant(k);
  gemm.kVar = static_cast<int64_t>(outerRank_);
  gemm.conv = std::move(conv);
  k_.gemm = std::move(gemm);
  for (size_t i = 0; i < body_.returns.size(); ++i) {
    if (body_.returns[i]->type.shape != k_.outer)
      throw Error("kernel IR: a convolution kernel stores a result of another shape than its conv's");
    Indices idx = vars(outerRank_);
    k_.stores.push_back({static_cast<int>(i), idx, eval(body_.returns[i], idx), false});
  }
}

ExprPtr Lowerer::convolutionAccumulator(const Node& n, const Indices& idx, std::shared_ptr<Expr> e) {
  if (!sameIndex(idx, vars(outerRank_)))
    throw Error("kernel IR: the epilogue reads the convolution's result through an index map");
  e->kind = Expr::Kind::Acc;
  e->dtype = DType::F32;
  if (n.operands.size() < 3) return e;
  return opOf(OpId::Add, DType::F32, {e, castTo(eval(n.operands[2], {idx[1]}), DType::F32)});
}

ExprPtr Lowerer::pooling(const Node& n) {
  const Value* x = n.operands[0];
  const std::vector<int64_t> kernel = kernelOf(n);
  const rules::WindowGeometry g = geometryOf(n, kernel.size());
  const Indices o = vars(outerRank_);
  WindowReads reads = forwardReads(x->type.shape, n.result()->type.shape, kernel, g, o, outerRank_);
  Indices xIdx = {o[0], o[1]};
  xIdx.insert(xIdx.end(), reads.at.begin(), reads.at.end());
  const DType t = n.result()->type.dtype;
  auto reduce = [&](OpId op, ExprPtr arg) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Reduce;
    e->op = op;
    e->dtype = arg->dtype;
    e->args = {std::move(arg)};
    return ExprPtr(e);
  };
  if (n.op == OpId::MaxPool) {
    // The padding is never the maximum: −inf, or the dtype's lowest integer.
    ExprPtr read = eval(x, xIdx);
    if (!reads.guarded.empty()) {
      auto lowest = std::make_shared<Expr>();
      lowest->kind = Expr::Kind::Const;
      lowest->dtype = t;
      lowest->value = -INFINITY;
      lowest->intValue = t == DType::I8 ? INT8_MIN : t == DType::I32 ? INT32_MIN : INT64_MIN;
      read = whereOf(inBounds(reads.guarded, reads.sizes), read, lowest);
    }
    return reduce(OpId::Amax, read);
  }
  const DType acc = accumulationType(t);
  ExprPtr sum = reduce(OpId::Sum, castTo(paddedRead(x, xIdx, reads.guarded, reads.sizes, 0), acc));
  // The divisor: the window's positions in the input, or with
  // count_include_pad in the padded input; a constant where no window
  // leaves what it counts.
  const Attribute* includePad = n.attrs.find("count_include_pad");
  Indices counted, bounds;
  for (size_t k = 0; k < kernel.size(); ++k) {
    const int64_t size = x->type.shape[2 + k].size;
    const IndexPtr kv = Index::var(static_cast<int64_t>(outerRank_ + k));
    const IndexPtr pos = add(mul(o[2 + k], c(g.stride[k])), mul(kv, c(g.dilation[k])));  // from −pad
    const int64_t last = (n.result()->type.shape[2 + k].size - 1) * g.stride[k] + (kernel[k] - 1) * g.dilation[k];
    const int64_t low = includePad && includePad->b ? 0 : g.padBegin[k];
    const int64_t high = includePad && includePad->b ? size + g.padBegin[k] + g.padEnd[k] : size + g.padBegin[k];
    if (low > 0 || last >= high) {
      counted.push_back(add(pos, c(-low)));
      bounds.push_back(c(high - low));
    }
  }
  ExprPtr count;
  if (counted.empty()) {
    int64_t points = 1;
    for (int64_t k : kernel) points *= k;
    count = constantOf(acc, static_cast<double>(points));
  } else {
    count = reduce(OpId::Sum, castTo(inBounds(counted, bounds), acc));
  }
  return castTo(opOf(OpId::Div, acc, {sum, count}), t);
}

ExprPtr Lowerer::cumulativeSum(const Node& n) {
  const Value* x = n.operands[0];
  const int64_t rank = x->type.rank();
  const size_t d = static_cast<size_t>(*rules::normalizeAxis(n.attrs.find("dim")->i, std::max<int64_t>(rank, 1)));
  const Indices o = vars(outerRank_);
  const IndexPtr j = Index::var(static_cast<int64_t>(outerRank_));
  const Attribute* exclusive = n.attrs.find("exclusive");
  const Attribute* reverse = n.attrs.find("reverse");
  // Element j counts where j ≤ i: (i − j) in [0, n); exclusive: (i − j − 1);
  // reversed: (j − i), (j − i − 1).
  const IndexPtr i = rank == 0 ? c(0) : o[d];
  IndexPtr distance = reverse && reverse->b ? add(j, mul(i, c(-1))) : add(i, mul(j, c(-1)));
  if (exclusive && exclusive->b) distance = add(distance, c(-1));
  Indices xIdx = rank == 0 ? Indices{} : o;
  if (rank > 0) xIdx[d] = j;
  const DType t = n.result()->type.dtype, acc = isFloat(t) ? accumulationType(t) : t;
  ExprPtr term =
      whereOf(inBounds({distance}, {Index::dim(windowLoops(n)[0])}), castTo(eval(x, xIdx), acc), constantOf(acc, 0));
  auto sum = std::make_shared<Expr>();
  sum->kind = Expr::Kind::Reduce;
  sum->op = OpId::Sum;
  sum->dtype = acc;
  sum->args = {term};
  return castTo(sum, t);
}

}  // namespace graphc::codegen::kernel
