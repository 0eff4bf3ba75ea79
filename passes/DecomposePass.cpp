// decompose: rewrites composite ops into primitives, so that fusion sees
// (and merges) the pointwise and reduction steps inside them:
//
//   softmax(x, d)      e = exp(x - amax(x, d)); e / sum(e, d)      (max first: stable)
//   log_softmax(x, d)  s = x - amax(x, d); s - log(sum(exp(s), d))
//   layer_norm(x,w,b)  c = x - mean(x); c * rsqrt(mean(c*c) + eps) * w + b
//   gelu(x)            0.5 x (1 + erf(x / √2))
//   gelu(x, "tanh")    0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))
//   silu(x)            x * sigmoid(x)
//   mean(x, dims)      sum(x, dims) * (1 / N)
//   batch_norm(x, m, v, w, b)   x * s + (b - m * s), s = w * rsqrt(v + eps), per
//                      channel ([C, 1, ...]); s and the shift are constants when
//                      the statistics are (fold-batch-norm took those after a conv)
//   group_norm(x, w, b)  layer_norm's steps over [N, G, C/G · spatial], the
//                      affine per channel read through index maps, reshaped back
//   argmax(x, d)       amin(where(x == amax(x, d) or x is NaN, iota(d), n), d): the
//                      first index of the maximum (argmin likewise)
//   scatter_nd(x, i, u)  a gather, as the kernels compute every element from
//                      its own index: hit[j, p] = (i[j] == p) over the N updates
//                      j and the indexed positions p; with no reduction
//                      last = amax(where(hit, j, -1), 0) and the result is
//                      where(last >= 0, u[max(last, 0)], x), so a later update
//                      to the same place wins; with add/mul/max/min, x combined
//                      with the reduction over j of where(hit, u[j], identity).
//                      Each costs N × positions × (elements per position)
//                      work, which suits the small N of exported models
//                      (masks, cache rows); past 2^24 updates × positions,
//                      or 2^25 elements of work (static sizes: an
//                      embedding's backward, 2048 token gradients into a
//                      vocabulary of 8192 rows of 256, would be 4·10^9),
//                      the scatter_nd stays, run by the reference's loop
//                      as a host step, O(N × elements per position). A
//                      scatter_nd into a parameter that its result updates
//                      in place (a KV cache's new row: `-> (... updates
//                      %cache)`) stays too: the plan stores the updates
//                      into the caller's buffer, O(N), instead of
//                      rewriting every element.
//
// Reductions keep their dims with keepdim = true and broadcast back. f16 and
// bf16 inputs are computed in f32 and cast back once, as PyTorch's kernels
// do (opmath), so decomposing does not add rounding steps in low precision.
// A mean over symbolic sizes keeps its op (N is unknown; mean is itself a
// reduction the kernel IR knows), and layer_norm over them uses it. softmax
// and log_softmax of a scalar are exp(x - x) / exp(x - x) and x - x.
// Changed: an op was decomposed.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ir/Builder.h"
#include "ir/ShapeRules.h"
#include "passes/Passes.h"
#include "passes/RegionSweep.h"
#include "runtime/reference/Constants.h"

namespace graphc::passes {

namespace {

using ir::Attribute;
using ir::AttrMap;
using ir::OpId;

// The most (updates × indexed positions) a scatter_nd is decomposed into a
// gather for, and the most elements that gather may compute (the grid
// times the elements each position holds).
constexpr int64_t kLargestScatterGrid = int64_t{1} << 24;
constexpr int64_t kLargestScatterWork = int64_t{1} << 25;
/// The largest constant reshaped at decomposition (a copy of it is made;
/// the original goes if nothing else reads it).
constexpr int64_t kMaxReshapedConstant = int64_t{1} << 16;

AttrMap reduceAttrs(const std::vector<int64_t>& dims, bool keepdim) {
  AttrMap a;
  a.set("dims", Attribute::ofInts(dims));
  a.set("keepdim", Attribute::ofBool(keepdim));
  return a;
}

/// Product of the reduced sizes, when static.
std::optional<int64_t> reducedCount(const ir::TensorType& t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    const ir::Dim& dim = t.shape[static_cast<size_t>(d)];
    if (!dim.isStatic()) return std::nullopt;
    n *= dim.size;
  }
  return n;
}

std::vector<int64_t> meanDims(const ir::Node& n) { return ir::rules::reducedAxes(n.attrs, n.operands[0]->type.rank()); }

class Decomposer {
 public:
  Decomposer(ir::Region& r, size_t pos, ir::Node& n) : n_(n), b_(r, pos, n.loc) {}

  /// The replacement of n's result, or null when n stays.
  ir::Value* run() {
    if (n_.operands.empty()) return nullptr;
    ir::Value* x = n_.operands[0];
    const ir::DType type = x->type.dtype;
    const bool low = type == ir::DType::F16 || type == ir::DType::BF16;
    switch (n_.op) {
      case OpId::Softmax:
      case OpId::LogSoftmax:
      case OpId::Gelu:
      case OpId::Silu: break;
      case OpId::Mean:
        if (!reducedCount(x->type, meanDims(n_))) return nullptr;
        break;
      case OpId::LayerNorm:
      case OpId::BatchNorm:
      case OpId::GroupNorm: break;
      case OpId::Argmax:
      case OpId::Argmin: return argExtremum(x);
      case OpId::ScatterNd: return scatterNd();
      default: return nullptr;
    }
    ir::Value* in = low ? castTo(x, ir::DType::F32) : x;
    ir::Value* out = nullptr;
    switch (n_.op) {
      case OpId::Softmax: out = softmax(in, false); break;
      case OpId::LogSoftmax: out = softmax(in, true); break;
      case OpId::Gelu: out = gelu(in); break;
      case OpId::Silu: out = b_.op(OpId::Mul, {in, b_.op(OpId::Sigmoid, {in})}); break;
      case OpId::Mean: out = mean(in, meanDims(n_), keepdim()); break;
      case OpId::LayerNorm: out = layerNorm(in, low); break;
      case OpId::BatchNorm: out = batchNorm(in, low); break;
      case OpId::GroupNorm: out = groupNorm(in, low); break;
      default: break;
    }
    return low ? castTo(out, type) : out;
  }

  size_t position() const { return b_.position(); }

 private:
  ir::Value* castTo(ir::Value* v, ir::DType t) {
    AttrMap a;
    a.set("dtype", Attribute::ofDType(t));
    return b_.op(OpId::Cast, {v}, a);
  }

  bool keepdim() const {
    const Attribute* k = n_.attrs.find("keepdim");
    return k && k->b;
  }

  ir::Value* scalarLike(ir::Value* v, double value) { return b_.scalar(v->type.dtype, value); }

  /// sum * (1 / N); over a symbolic size, where N is not known, a `mean`
  /// (itself a primitive reduction of the kernel IR).
  ir::Value* mean(ir::Value* x, const std::vector<int64_t>& dims, bool keep) {
    const std::optional<int64_t> n = reducedCount(x->type, dims);
    if (!n) return b_.op(OpId::Mean, {x}, reduceAttrs(dims, keep));
    ir::Value* sum = b_.op(OpId::Sum, {x}, reduceAttrs(dims, keep));
    return b_.op(OpId::Mul, {sum, scalarLike(x, 1.0 / static_cast<double>(*n))});
  }

  ir::Value* softmax(ir::Value* x, bool logOutput) {
    if (x->type.rank() == 0) {
      // One element: x - max(x) is x - x (0, or NaN for a NaN or inf).
      ir::Value* shifted = b_.op(OpId::Sub, {x, x});
      if (logOutput) return shifted;
      ir::Value* e = b_.op(OpId::Exp, {shifted});
      return b_.op(OpId::Div, {e, e});
    }
    const int64_t dim = *ir::rules::normalizeAxis(n_.attrs.find("dim")->i, x->type.rank());
    ir::Value* max = b_.op(OpId::Amax, {x}, reduceAttrs({dim}, true));
    ir::Value* shifted = b_.op(OpId::Sub, {x, max});
    ir::Value* e = b_.op(OpId::Exp, {shifted});
    ir::Value* sum = b_.op(OpId::Sum, {e}, reduceAttrs({dim}, true));
    if (logOutput) return b_.op(OpId::Sub, {shifted, b_.op(OpId::Log, {sum})});
    return b_.op(OpId::Div, {e, sum});
  }

  ir::Value* gelu(ir::Value* x) {
    const Attribute* approx = n_.attrs.find("approximate");
    ir::Value* half = b_.op(OpId::Mul, {x, scalarLike(x, 0.5)});
    if (approx && approx->s == "tanh") {
      ir::Value* cube = b_.op(OpId::Mul, {b_.op(OpId::Mul, {x, x}), x});
      ir::Value* inner = b_.op(OpId::Add, {x, b_.op(OpId::Mul, {cube, scalarLike(x, 0.044715)})});
      ir::Value* t = b_.op(OpId::Tanh, {b_.op(OpId::Mul, {inner, scalarLike(x, std::sqrt(2.0 / std::numbers::pi))})});
      return b_.op(OpId::Mul, {half, b_.op(OpId::Add, {t, scalarLike(x, 1.0)})});
    }
    ir::Value* e = b_.op(OpId::Erf, {b_.op(OpId::Mul, {x, scalarLike(x, 1.0 / std::numbers::sqrt2)})});
    return b_.op(OpId::Mul, {half, b_.op(OpId::Add, {e, scalarLike(x, 1.0)})});
  }

  ir::Value* layerNorm(ir::Value* x, bool low) {
    const int64_t rank = x->type.rank(), k = n_.operands[1]->type.rank();
    std::vector<int64_t> dims;
    for (int64_t d = rank - k; d < rank; ++d) dims.push_back(d);
    const Attribute* epsAttr = n_.attrs.find("eps");
    const double eps = epsAttr ? epsAttr->asDouble() : 1e-5;
    ir::Value* centered = b_.op(OpId::Sub, {x, mean(x, dims, true)});
    ir::Value* var = mean(b_.op(OpId::Mul, {centered, centered}), dims, true);
    ir::Value* inv = b_.op(OpId::Rsqrt, {b_.op(OpId::Add, {var, scalarLike(x, eps)})});
    ir::Value* w = low ? castTo(n_.operands[1], ir::DType::F32) : n_.operands[1];
    ir::Value* y = b_.op(OpId::Mul, {b_.op(OpId::Mul, {centered, inv}), w});
    if (n_.operands.size() > 2)
      y = b_.op(OpId::Add, {y, low ? castTo(n_.operands[2], ir::DType::F32) : n_.operands[2]});
    return y;
  }

  double eps() const {
    const Attribute* e = n_.attrs.find("eps");
    return e ? e->asDouble() : 1e-5;
  }

  /// A per-channel [C] value as [C, 1, ...] against an [N, C, ...] input.
  ir::Value* perChannel(ir::Value* p, int64_t rank) {
    ir::Shape shape(static_cast<size_t>(rank - 1), ir::Dim::of(1));
    shape[0] = p->type.shape[0];
    return reshape(p, shape);
  }

  ir::Value* batchNorm(ir::Value* x, bool low) {
    const ir::DType t = x->type.dtype;                  // f32 for f16/bf16 inputs
    std::vector<std::optional<runtime::Tensor>> stats;  // mean, var, weight, bias
    for (size_t k = 1; k < 5; ++k) stats.push_back(runtime::constantTensor(n_.operands[k]));
    ir::Value *scale, *shift;
    if (std::all_of(stats.begin(), stats.end(), [](const auto& s) { return s.has_value(); })) {
      const int64_t c = stats[0]->numel();
      runtime::Tensor s(t, {c}), h(t, {c});
      for (int64_t i = 0; i < c; ++i) {
        const double si = stats[2]->getDouble(i) / std::sqrt(stats[1]->getDouble(i) + eps());
        s.setDouble(i, si);
        h.setDouble(i, stats[3]->getDouble(i) - stats[0]->getDouble(i) * si);
      }
      scale = runtime::insertConstant(b_.region(), b_.reserve(), s, n_.loc);
      shift = runtime::insertConstant(b_.region(), b_.reserve(), h, n_.loc);
    } else {
      auto operand = [&](size_t k) { return low ? castTo(n_.operands[k], t) : n_.operands[k]; };
      ir::Value* inv = b_.op(OpId::Rsqrt, {b_.op(OpId::Add, {operand(2), b_.scalar(t, eps())})});
      scale = b_.op(OpId::Mul, {operand(3), inv});
      shift = b_.op(OpId::Sub, {operand(4), b_.op(OpId::Mul, {operand(1), scale})});
    }
    const int64_t rank = x->type.rank();
    return b_.op(OpId::Add, {b_.op(OpId::Mul, {x, perChannel(scale, rank)}), perChannel(shift, rank)});
  }

  ir::Value* groupNorm(ir::Value* x, bool low) {
    const ir::Shape& shape = x->type.shape;
    const int64_t groups = n_.attrs.find("groups")->i, channels = shape[1].size;
    std::optional<ir::Dim> spatial = ir::numElements(ir::Shape(shape.begin() + 2, shape.end()));
    AttrMap grouped;
    grouped.set("shape", Attribute::ofList(
                             {ir::shapeAttribute({shape[0]}).list[0], Attribute::ofInt(groups), Attribute::ofInt(-1)}));
    ir::Value* x3 = b_.op(OpId::Reshape, {x}, grouped);
    ir::Value* centered = b_.op(OpId::Sub, {x3, mean(x3, {2}, true)});
    ir::Value* var = mean(b_.op(OpId::Mul, {centered, centered}), {2}, true);
    ir::Value* inv = b_.op(OpId::Rsqrt, {b_.op(OpId::Add, {var, scalarLike(x3, eps())})});
    ir::Value* y3 = b_.op(OpId::Mul, {centered, inv});
    auto param = [&](size_t k) { return low ? castTo(n_.operands[k], x->type.dtype) : n_.operands[k]; };
    ir::Value* y;
    if (spatial && spatial->isStatic()) {
      // The affine in the grouped layout: w[c] read at [g, j] through index
      // maps, so the normalisation and the affine are one kernel.
      auto grouped3 = [&](ir::Value* p) {
        AttrMap split, wide, flat;
        split.set("shape", Attribute::ofInts({1, groups, channels / groups, 1}));
        wide.set("shape", Attribute::ofInts({1, groups, channels / groups, spatial->size}));
        flat.set("shape", Attribute::ofInts({1, groups, channels / groups * spatial->size}));
        ir::Value* v = b_.op(OpId::Reshape, {p}, split);
        return b_.op(OpId::Reshape, {b_.op(OpId::Expand, {v}, wide)}, flat);
      };
      y3 = b_.op(OpId::Add, {b_.op(OpId::Mul, {y3, grouped3(param(1))}), grouped3(param(2))});
      AttrMap back;
      back.set("shape", ir::shapeAttribute(shape));
      y = b_.op(OpId::Reshape, {y3}, back);
    } else {
      AttrMap back;
      back.set("shape", ir::shapeAttribute(shape));
      y = b_.op(OpId::Reshape, {y3}, back);
      const int64_t rank = x->type.rank();
      y = b_.op(OpId::Add, {b_.op(OpId::Mul, {y, perChannel(param(1), rank)}), perChannel(param(2), rank)});
    }
    return y;
  }

  /// The first index of the extremum along the dim (a NaN counts as one),
  /// as amin over the indices where x equals the extremum.
  ir::Value* argExtremum(ir::Value* x) {
    const int64_t rank = x->type.rank();
    const bool keep = keepdim();
    if (rank == 0) return b_.scalar(ir::DType::I64, 0);
    const int64_t dim = *ir::rules::normalizeAxis(n_.attrs.find("dim")->i, rank);
    const ir::Dim& n = x->type.shape[static_cast<size_t>(dim)];
    ir::Value* extremum = b_.op(n_.op == OpId::Argmax ? OpId::Amax : OpId::Amin, {x}, reduceAttrs({dim}, true));
    ir::Value* hit = b_.op(OpId::Eq, {x, extremum});
    if (ir::isFloat(x->type.dtype)) hit = b_.op(OpId::LogicalOr, {hit, b_.op(OpId::Ne, {x, x})});
    ir::Shape line(static_cast<size_t>(rank), ir::Dim::of(1));
    line[static_cast<size_t>(dim)] = n;
    AttrMap along;
    along.set("dim", Attribute::ofInt(dim));
    ir::Value* index =
        ir::insertNode(b_.region(), b_.reserve(), OpId::Iota, {}, along, {{ir::DType::I64, line}}, n_.loc)->result();
    ir::Value* past = n.isStatic() ? b_.scalar(ir::DType::I64, static_cast<double>(n.size))
                                   : b_.scalar(ir::DType::I64, static_cast<double>(INT64_MAX));
    ir::Value* candidates = b_.op(OpId::Where, {hit, index, past});
    return b_.op(OpId::Amin, {candidates}, reduceAttrs({dim}, keep));
  }

  ir::Value* reshape(ir::Value* v, const ir::Shape& shape) {
    // A small constant (a batch_norm's statistics, a scale) is reshaped
    // here rather than left as a reshape for a kernel to copy at run time:
    // decompose runs after canonicalize, which would have folded it.
    const bool staticShape = std::all_of(shape.begin(), shape.end(), [](const ir::Dim& d) { return d.isStatic(); });
    if (staticShape && v->type.isStatic() && *v->type.staticNumElements() <= kMaxReshapedConstant) {
      if (std::optional<runtime::Tensor> t = runtime::constantTensor(v)) {
        std::vector<int64_t> sizes;
        for (const ir::Dim& d : shape) sizes.push_back(d.size);
        return runtime::insertConstant(b_.region(), b_.reserve(), t->reshaped(sizes), n_.loc);
      }
    }
    AttrMap a;
    a.set("shape", ir::shapeAttribute(shape));
    return b_.op(OpId::Reshape, {v}, a);
  }

  ir::Value* iota(const ir::Shape& shape, int64_t dim) {
    AttrMap a;
    a.set("dim", Attribute::ofInt(dim));
    return ir::insertNode(b_.region(), b_.reserve(), OpId::Iota, {}, a, {{ir::DType::I64, shape}}, n_.loc)->result();
  }

  ir::Value* scatterNd() {
    ir::Value* x = n_.operands[0];
    ir::Value* updates = n_.operands[2];
    const Attribute* r = n_.attrs.find("reduction");
    const std::string reduction = r ? r->s : "none";
    const ir::Shape& xs = x->type.shape;
    const ir::Shape& is = n_.operands[1]->type.shape;
    const size_t depth = static_cast<size_t>(is.back().size);
    const std::optional<ir::Dim> count = ir::numElements(ir::Shape(is.begin(), is.end() - 1));
    const std::optional<ir::Dim> block = ir::numElements(ir::Shape(xs.begin() + static_cast<int64_t>(depth), xs.end()));
    const std::optional<ir::Dim> places =
        ir::numElements(ir::Shape(xs.begin(), xs.begin() + static_cast<int64_t>(depth)));
    if (!count || !block || !places) return nullptr;  // sizes past int64: the reference reports them
    // The gather form costs updates × indexed positions; past
    // kLargestScatterGrid (a chunked linear-attention state written row by
    // row: 2^19 × 2^19) the scatter stays whole, the reference's O(updates)
    // loop as a host step.
    if (count->isStatic() && places->isStatic() && places->size != 0 &&
        (count->size > kLargestScatterGrid / places->size ||
         (block->isStatic() && block->size != 0 && count->size > kLargestScatterWork / places->size / block->size)))
      return nullptr;
    const ir::Dim n = *count, s = *block;
    ir::Value* index = reshape(n_.operands[1], {n, ir::Dim::of(static_cast<int64_t>(depth))});
    if (index->type.dtype != ir::DType::I64) index = castTo(index, ir::DType::I64);
    // hit[j, p...]: update j's coordinates are p (negative ones count from the end).
    ir::Shape column(depth + 1, ir::Dim::of(1));
    column[0] = n;
    ir::Shape grid{ir::Dim::of(1)};
    grid.insert(grid.end(), xs.begin(), xs.begin() + static_cast<int64_t>(depth));
    ir::Value* hit = nullptr;
    for (size_t t = 0; t < depth; ++t) {
      AttrMap slice;
      slice.set("dim", Attribute::ofInt(1));
      slice.set("start", Attribute::ofInt(static_cast<int64_t>(t)));
      slice.set("end", Attribute::ofInt(static_cast<int64_t>(t) + 1));
      ir::Value* coordinate = reshape(b_.op(OpId::Slice, {index}, slice), column);
      // The dim's size, for negative coordinates: a constant, or for a
      // symbolic size a sum of that many ones (its value at run time).
      ir::Value* size = nullptr;
      if (xs[t].isStatic()) {
        size = b_.scalar(ir::DType::I64, static_cast<double>(xs[t].size));
      } else {
        AttrMap one;
        one.set("value", Attribute::ofInt(1));
        ir::Value* ones =
            ir::insertNode(b_.region(), b_.reserve(), OpId::Full, {}, one, {{ir::DType::I64, {xs[t]}}}, n_.loc)
                ->result();
        size = b_.op(OpId::Sum, {ones}, reduceAttrs({0}, false));
      }
      ir::Value* negative = b_.op(OpId::Lt, {coordinate, b_.scalar(ir::DType::I64, 0)});
      coordinate = b_.op(OpId::Where, {negative, b_.op(OpId::Add, {coordinate, size}), coordinate});
      ir::Value* same = b_.op(OpId::Eq, {coordinate, iota(grid, static_cast<int64_t>(t) + 1)});
      hit = hit ? b_.op(OpId::LogicalAnd, {hit, same}) : same;
    }
    ir::Shape spread = column;  // [N, 1 (per indexed dim)..., S]
    spread.push_back(s);
    ir::Shape placed(xs.begin(), xs.begin() + static_cast<int64_t>(depth));  // the indexed positions, then S
    placed.push_back(s);
    if (reduction == "none") {
      ir::Value* which = iota(column, 0);
      ir::Value* last =
          b_.op(OpId::Amax, {b_.op(OpId::Where, {hit, which, b_.scalar(ir::DType::I64, -1)})}, reduceAttrs({0}, false));
      ir::Value* found = b_.op(OpId::Ge, {last, b_.scalar(ir::DType::I64, 0)});
      ir::Value* row = reshape(b_.op(OpId::Maximum, {last, b_.scalar(ir::DType::I64, 0)}), {*places});
      AttrMap along;
      along.set("dim", Attribute::ofInt(0));
      ir::Value* picked = b_.op(OpId::IndexSelect, {reshape(updates, {n, s}), row}, along);
      ir::Shape flag(xs.begin(), xs.begin() + static_cast<int64_t>(depth));
      flag.push_back(ir::Dim::of(1));
      ir::Value* chosen = b_.op(OpId::Where, {reshape(found, flag), reshape(picked, placed), reshape(x, placed)});
      return reshape(chosen, xs);
    }
    const ir::DType type = x->type.dtype;
    OpId reduce = OpId::Sum, combine = OpId::Add;
    ir::Value* identity = nullptr;
    if (reduction == "add") {
      identity = b_.scalar(type, 0);
    } else if (reduction == "mul") {
      identity = b_.scalar(type, 1);
      reduce = OpId::Prod;
      combine = OpId::Mul;
    } else {
      const bool max = reduction == "max";
      reduce = max ? OpId::Amax : OpId::Amin;
      combine = max ? OpId::Maximum : OpId::Minimum;
      if (ir::isFloat(type)) {
        identity = b_.scalar(type, max ? -INFINITY : INFINITY);
      } else {  // the dtype's extreme, exactly (INT64_MAX has no double)
        const int64_t bits = 8 * ir::dtypeSize(type) - 1;
        const int64_t top = static_cast<int64_t>((uint64_t{1} << bits) - 1);
        AttrMap value;
        value.set("value", Attribute::ofInt(max ? -top - 1 : top));
        identity = ir::insertNode(b_.region(), b_.reserve(), OpId::Constant, {}, value, {{type, {}}}, n_.loc)->result();
      }
    }
    ir::Shape hitShape = grid;  // [N, the indexed positions..., 1]
    hitShape[0] = n;
    hitShape.push_back(ir::Dim::of(1));
    ir::Value* contributions = b_.op(OpId::Where, {reshape(hit, hitShape), reshape(updates, spread), identity});
    ir::Value* total = b_.op(reduce, {contributions}, reduceAttrs({0}, false));
    if (total->type.dtype != type) total = castTo(total, type);  // sum and prod of integers are i64: wrap back
    return reshape(b_.op(combine, {reshape(x, placed), total}), xs);
  }

  ir::Node& n_;
  ir::NodeBuilder b_;
};

/// Whether `n` is a scatter_nd into a parameter of `g` that its result,
/// returned, updates in place.
bool scattersIntoUpdatedInput(const ir::Graph& g, const ir::Node& n) {
  if (n.op != OpId::ScatterNd || n.operands[0]->parentRegion() != &g.body || n.operands[0]->definingNode())
    return false;
  const int k = g.updatingResult(n.operands[0]);
  return k >= 0 && g.body.returns[static_cast<size_t>(k)] == n.result();
}

bool decompose(ir::Region& r, const ir::Graph* g) {
  bool changed = false;
  RegionSweep sweep(r);
  while (ir::Node* n = sweep.next()) {
    for (const auto& inner : n->regions()) changed |= decompose(*inner, nullptr);
    if (g && scattersIntoUpdatedInput(*g, *n)) continue;
    Decomposer d(r, sweep.position(), *n);
    ir::Value* replacement = d.run();
    if (!replacement) continue;
    // The last primitive carries the composite's name, so dumps still say %probs.
    if (replacement->name.empty()) replacement->name = n->result()->name;
    sweep.replace(n->result(), replacement);
    sweep.dropCurrent();  // the composite op, now unused
    changed = true;
  }
  return changed;
}

}  // namespace

PassResult DecomposePass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {decompose(g.body, &g), false}; }

}  // namespace graphc::passes
