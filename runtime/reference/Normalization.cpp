// Reference kernels of the normalisations: layer_norm over trailing dims,
// batch_norm in inference form (running statistics given), group_norm
// (instance norm is group_norm with one channel per group). Statistics in
// f64; the variance is the biased one, as torch's.
#include <cmath>

#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime::reference {

using ir::OpId;

namespace {

double epsOf(const ir::Node& n) {
  const ir::Attribute* eps = n.attrs.find("eps");
  return eps ? eps->asDouble() : 1e-5;
}

/// Elements per channel of an [N, C, ...] tensor.
int64_t channelSize(const Tensor& x) {
  int64_t inner = 1;
  for (int64_t k = 2; k < x.rank(); ++k) inner *= x.shape()[k];
  return inner;
}

Tensor layerNorm(const ir::Node& n, const std::vector<Tensor>& operands) {
  const Tensor& x = operands[0];
  const Tensor& w = operands[1];
  const Tensor* b = operands.size() > 2 ? &operands[2] : nullptr;
  const double eps = epsOf(n);
  const int64_t group = w.numel();
  const int64_t rows = group == 0 ? 0 : x.numel() / group;
  Tensor out(x.dtype(), x.shape());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < group; ++j) mean += x.getDouble(r * group + j);
    mean /= static_cast<double>(group);
    for (int64_t j = 0; j < group; ++j) {
      double d = x.getDouble(r * group + j) - mean;
      var += d * d;
    }
    var /= static_cast<double>(group);  // biased, as torch.layer_norm
    const double scale = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < group; ++j) {
      double y = (x.getDouble(r * group + j) - mean) * scale * w.getDouble(j);
      if (b) y += b->getDouble(j);
      out.setDouble(r * group + j, y);
    }
  }
  return out;
}

/// y = (x − mean[c]) / sqrt(var[c] + eps) · weight[c] + bias[c]
Tensor batchNorm(const ir::Node& n, const std::vector<Tensor>& operands) {
  const Tensor& x = operands[0];
  const int64_t channels = x.shape()[1], inner = channelSize(x);
  const double eps = epsOf(n);
  Tensor out(x.dtype(), x.shape());
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = operands[3].getDouble(c) / std::sqrt(operands[2].getDouble(c) + eps);
    const double mean = operands[1].getDouble(c), bias = operands[4].getDouble(c);
    for (int64_t b = 0; b < x.shape()[0]; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (b * channels + c) * inner + i;
        out.setDouble(at, (x.getDouble(at) - mean) * scale + bias);
      }
  }
  return out;
}

/// Statistics over each group of C/groups channels of a sample, then the
/// per-channel affine.
Tensor groupNorm(const ir::Node& n, const std::vector<Tensor>& operands) {
  const Tensor& x = operands[0];
  const int64_t channels = x.shape()[1], inner = channelSize(x);
  const int64_t groups = n.attrs.find("groups")->i, perGroup = channels / groups * inner;
  const double eps = epsOf(n);
  Tensor out(x.dtype(), x.shape());
  for (int64_t b = 0; b < x.shape()[0]; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t first = (b * groups + g) * perGroup;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < perGroup; ++j) mean += x.getDouble(first + j);
      mean /= static_cast<double>(perGroup);
      for (int64_t j = 0; j < perGroup; ++j) var += (x.getDouble(first + j) - mean) * (x.getDouble(first + j) - mean);
      var /= static_cast<double>(perGroup);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t j = 0; j < perGroup; ++j) {
        const int64_t c = g * (channels / groups) + j / inner;
        out.setDouble(first + j,
                      (x.getDouble(first + j) - mean) * inv * operands[1].getDouble(c) + operands[2].getDouble(c));
      }
    }
  return out;
}

}  // namespace

Tensor normalization(const ir::Node& n, const std::vector<Tensor>& operands) {
  switch (n.op) {
    case OpId::LayerNorm: return layerNorm(n, operands);
    case OpId::BatchNorm: return batchNorm(n, operands);
    case OpId::GroupNorm: return groupNorm(n, operands);
    default: throw ir::Error("reference: not a normalisation");
  }
}

}  // namespace graphc::runtime::reference
