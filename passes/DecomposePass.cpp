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
//
// Reductions keep their dims with keepdim = true and broadcast back. f16 and
// bf16 inputs are computed in f32 and cast back once, as PyTorch's kernels
// do (opmath), so decomposing does not add rounding steps in low precision.
// A mean over symbolic sizes keeps its op (N is unknown; mean is itself a
// reduction the kernel IR knows), and layer_norm over them uses it. softmax
// and log_softmax of a scalar are exp(x - x) / exp(x - x) and x - x.
// Changed: an op was decomposed.
#include <cmath>
#include <numbers>

#include "ir/Builder.h"
#include "ir/ShapeRules.h"
#include "passes/Passes.h"
#include "runtime/reference/Constants.h"

namespace graphc::passes {

namespace {

using ir::Attribute;
using ir::AttrMap;
using ir::OpId;

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
      case OpId::LayerNorm: break;
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

  ir::Node& n_;
  ir::NodeBuilder b_;
};

bool decompose(ir::Region& r) {
  bool changed = false;
  for (size_t pos = 0; pos < r.nodes().size(); ++pos) {
    ir::Node& n = *r.nodes()[pos];
    for (const auto& inner : n.regions()) changed |= decompose(*inner);
    Decomposer d(r, pos, n);
    ir::Value* replacement = d.run();
    if (!replacement) continue;
    // The last primitive carries the composite's name, so dumps still say %probs.
    if (replacement->name.empty()) replacement->name = n.result()->name;
    r.replaceAllUses(n.result(), replacement);
    pos = d.position();
    r.release(pos);  // the composite op, now unused
    --pos;
    changed = true;
  }
  return changed;
}

}  // namespace

PassResult DecomposePass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {decompose(g.body), false}; }

}  // namespace graphc::passes
