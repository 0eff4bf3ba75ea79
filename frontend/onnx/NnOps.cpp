// ONNX neural-network ops → graphc: MatMul and Gemm (as `linear` where it
// is one, so the fuser sees a GEMM with a bias epilogue), the
// normalisations (LayerNormalization onto layer_norm, BatchNormalization
// onto batch_norm, GroupNormalization and InstanceNormalization onto
// group_norm, mean-variance normalisation written out in primitives), the
// global pools, and Dropout in inference mode.
#include <fmt/format.h>

#include "frontend/onnx/ImportContext.h"
#include "ir/Builder.h"
#include "runtime/reference/Constants.h"

namespace graphc::frontend::onnximport {

namespace {

using ir::OpId;

ir::Value* transposed(NodeContext& c, ir::Value* m) {
  ir::AttrMap a;
  a.set("dim0", ir::Attribute::ofInt(-2));
  a.set("dim1", ir::Attribute::ofInt(-1));
  return c.op(OpId::Transpose, {m}, a);
}

void matmul(NodeContext& c) {
  needFloat(c, c.required(0));
  c.setOutput(0, c.op(OpId::Matmul, {c.required(0), c.required(1)}));
}

/// Gemm: Y = alpha * A' B' + beta * C. With B transposed (a Linear layer's
/// [out, in] weight) it is `linear`, the bias joining when alpha = beta = 1.
void gemm(NodeContext& c) {
  ir::Value* a = c.required(0);
  ir::Value* b = c.required(1);
  ir::Value* bias = c.input(2);
  needFloat(c, a);
  if (a->type.rank() != 2 || b->type.rank() != 2)
    c.fail(fmt::format("A and B must be matrices, got {} and {}", ir::toString(a->type), ir::toString(b->type)));
  const double alpha = c.floatAttr("alpha", 1), beta = c.floatAttr("beta", 1);
  if (c.intAttr("transA", 0)) a = transposed(c, a);
  ir::Value* y = nullptr;
  const bool transB = c.intAttr("transB", 0) != 0;
  const bool biasInLinear = transB && bias && alpha == 1 && beta == 1 && bias->type.rank() == 1 &&
                            bias->type.dtype == b->type.dtype && bias->type.shape[0] == b->type.shape[0];
  if (transB) {
    y = biasInLinear ? c.op(OpId::Linear, {a, b, bias}) : c.op(OpId::Linear, {a, b});
  } else {
    y = c.op(OpId::Matmul, {a, b});
  }
  if (alpha != 1) y = c.op(OpId::Mul, {y, c.scalarLike(y, alpha)});
  if (bias && !biasInLinear) {
    ir::Value* scaled = beta == 1 ? bias : c.op(OpId::Mul, {bias, c.scalarLike(bias, beta)});
    y = c.op(OpId::Add, {y, scaled});
  }
  c.setOutput(0, y);
}

/// Mean and (biased) variance over `dims`, kept as size-1 dims.
std::pair<ir::Value*, ir::Value*> moments(NodeContext& c, ir::Value* x, const std::vector<int64_t>& dims) {
  ir::Value* mean = c.op(OpId::Mean, {x}, reduceAttrs(dims, true));
  ir::Value* centered = c.op(OpId::Sub, {x, mean});
  ir::Value* var = c.op(OpId::Mean, {c.op(OpId::Mul, {centered, centered})}, reduceAttrs(dims, true));
  return {mean, var};
}

/// A parameter of shape [..] broadcast onto `normalized` (ONNX lets Scale
/// and B of LayerNormalization be broadcastable rather than equal).
ir::Value* fitTo(NodeContext& c, ir::Value* p, const ir::Shape& normalized) {
  if (p->type.shape == normalized) return p;
  return c.op(OpId::Expand, {p}, oneAttr("shape", ir::shapeAttribute(normalized)));
}

void layerNormalization(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  const int64_t rank = x->type.rank();
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", -1), rank);
  const double eps = c.floatAttr("epsilon", 1e-5f);
  const ir::Shape normalized(x->type.shape.begin() + axis, x->type.shape.end());
  std::vector<ir::Value*> operands{x, fitTo(c, c.required(1), normalized)};
  if (c.present(2)) operands.push_back(fitTo(c, c.input(2), normalized));
  c.setOutput(0, c.op(OpId::LayerNorm, operands, oneAttr("eps", ir::Attribute::ofFloat(eps))));
  if (c.outputWanted(1) || c.outputWanted(2)) {
    std::vector<int64_t> dims;
    for (int64_t d = axis; d < rank; ++d) dims.push_back(d);
    auto [mean, var] = moments(c, x, dims);
    c.setOutput(1, mean);
    c.setOutput(2, c.op(OpId::Rsqrt, {c.op(OpId::Add, {var, c.scalarLike(var, eps)})}));
  }
}

/// A per-channel parameter of an [N, C, ...] input: [C], in x's dtype
/// (ONNX lets the statistics have another float type).
ir::Value* channelParam(NodeContext& c, size_t k, const ir::Value* x) {
  ir::Value* p = c.required(k);
  if (p->type.rank() != 1 || p->type.shape[0] != x->type.shape[1])
    c.fail(fmt::format("per-channel parameters must be [C] = [{}], got {}", ir::toString(x->type.shape[1]),
                       ir::toString(p->type)));
  return c.cast(p, x->type.dtype);
}

void batchNormalization(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  if (c.intAttr("training_mode", 0) || c.intAttr("is_test", 1) == 0)
    c.unsupported("training_mode", "training mode (batch statistics) is not supported");
  if (c.intAttr("spatial", 1) == 0)
    c.unsupported("spatial=0", "per-activation statistics (spatial = 0) are not supported");
  for (size_t k = 1; k < c.numOutputs(); ++k)
    if (c.outputWanted(k))
      c.unsupported("training outputs", "the running statistics outputs (training) are not supported");
  if (x->type.rank() < 2) c.fail(fmt::format("the input must be [N, C, ...], got {}", ir::toString(x->type)));
  // ONNX: X, scale, B, mean, var; graphc: x, mean, var, weight, bias.
  std::vector<ir::Value*> operands{x, channelParam(c, 3, x), channelParam(c, 4, x), channelParam(c, 1, x),
                                   channelParam(c, 2, x)};
  c.setOutput(0,
              c.op(OpId::BatchNorm, operands, oneAttr("eps", ir::Attribute::ofFloat(c.floatAttr("epsilon", 1e-5f)))));
}

/// InstanceNormalization is group_norm with one channel per group.
void instanceNormalization(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  if (x->type.rank() < 3) c.fail(fmt::format("the input must be [N, C, D1, ...], got {}", ir::toString(x->type)));
  if (!x->type.shape[1].isStatic()) c.unsupported("with symbolic channels", "the channel count must be static");
  ir::AttrMap attrs = oneAttr("eps", ir::Attribute::ofFloat(c.floatAttr("epsilon", 1e-5f)));
  attrs.set("groups", ir::Attribute::ofInt(x->type.shape[1].size));
  c.setOutput(0, c.op(OpId::GroupNorm, {x, channelParam(c, 1, x), channelParam(c, 2, x)}, attrs));
}

/// GroupNormalization: scale and bias are per channel from opset 21, per
/// group before (each group's value then repeats over its channels).
void groupNormalization(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  if (x->type.rank() < 2) c.fail(fmt::format("the input must be [N, C, ...], got {}", ir::toString(x->type)));
  if (!x->type.shape[1].isStatic()) c.unsupported("with symbolic channels", "the channel count must be static");
  const int64_t channels = x->type.shape[1].size, groups = c.intAttr("num_groups", 0);
  if (groups < 1 || channels % groups != 0)
    c.fail(fmt::format("'num_groups' {} must divide the {} channels", groups, channels));
  auto param = [&](size_t k) {
    ir::Value* p = c.required(k);
    if (p->type.rank() == 1 && p->type.shape[0].isStatic(groups) && groups != channels) {
      ir::Value* column = c.op(OpId::Unsqueeze, {c.cast(p, x->type.dtype)}, oneAttr("dim", ir::Attribute::ofInt(1)));
      ir::Value* wide =
          c.op(OpId::Expand, {column}, oneAttr("shape", ir::Attribute::ofInts({groups, channels / groups})));
      return c.op(OpId::Reshape, {wide}, oneAttr("shape", ir::Attribute::ofInts({channels})));
    }
    return channelParam(c, k, x);
  };
  ir::AttrMap attrs = oneAttr("eps", ir::Attribute::ofFloat(c.floatAttr("epsilon", 1e-5f)));
  attrs.set("groups", ir::Attribute::ofInt(groups));
  c.setOutput(0, c.op(OpId::GroupNorm, {x, param(1), param(2)}, attrs));
}

/// (X - E[X]) / (sqrt(E[(X - E[X])²]) + 1e-9), the ONNX function body.
void meanVarianceNormalization(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  std::vector<int64_t> axes = c.intsAttr("axes").value_or(std::vector<int64_t>{0, 2, 3});
  for (int64_t& a : axes) a = normalizeAxis(c, a, x->type.rank());
  auto [mean, var] = moments(c, x, axes);
  ir::Value* std = c.op(OpId::Add, {c.op(OpId::Sqrt, {var}), c.scalarLike(var, 1e-9)});
  c.setOutput(0, c.op(OpId::Div, {c.op(OpId::Sub, {x, mean}), std}));
}

/// GlobalAveragePool / GlobalMaxPool: mean / max over the spatial dims,
/// kept as 1s.
template <OpId op>
void globalPool(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  if (x->type.rank() < 3) c.fail(fmt::format("the input must be [N, C, D1, ...], got {}", ir::toString(x->type)));
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < x->type.rank(); ++d) spatial.push_back(d);
  c.setOutput(0, c.op(op, {x}, reduceAttrs(spatial, true)));
}

/// Inference-mode Dropout is the identity; its mask is all true.
void dropout(NodeContext& c) {
  ir::Value* x = c.required(0);
  if (c.present(2)) {
    std::optional<runtime::Tensor> training = c.constant(2);
    if (!training || training->getInt(0) != 0)
      c.unsupported("training_mode", "training-mode dropout (random) is not supported");
  }
  if (c.intAttr("is_test", 1) == 0)
    c.unsupported("training_mode", "training-mode dropout (is_test = 0) is not supported");
  c.setOutput(0, x);
  if (c.outputWanted(1)) {
    c.setOutput(
        1, c.op(OpId::Expand, {c.scalar(ir::DType::Bool, 1)}, oneAttr("shape", ir::shapeAttribute(x->type.shape))));
  }
}

const OpMapping kOps[] = {
    {"MatMul", matmul, {}},
    {"Gemm", gemm, {"alpha", "beta", "transA", "transB", "broadcast"}},
    {"LayerNormalization", layerNormalization, {"axis", "epsilon", "stash_type"}},
    {"BatchNormalization",
     batchNormalization,
     {"epsilon", "momentum", "training_mode", "spatial", "is_test", "consumed_inputs"}},
    {"InstanceNormalization", instanceNormalization, {"epsilon"}},
    {"GroupNormalization", groupNormalization, {"epsilon", "num_groups", "stash_type"}},
    {"MeanVarianceNormalization", meanVarianceNormalization, {"axes"}},
    {"Dropout", dropout, {"ratio", "seed", "is_test"}},
    {"GlobalAveragePool", globalPool<OpId::Mean>, {}},
    {"GlobalMaxPool", globalPool<OpId::Amax>, {}},
};

}  // namespace

std::span<const OpMapping> nnOps() { return kOps; }

}  // namespace graphc::frontend::onnximport
