#include "runtime/Format.h"

#include <cmath>

#include <fmt/format.h>

namespace graphc::runtime {

namespace {

constexpr int64_t kSummariseAbove = 1000;
constexpr int64_t kEdgeItems = 3;

std::string element(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::Bool) return t.getInt(i) ? "true" : "false";
  if (!ir::isFloat(t.dtype())) return std::to_string(t.getInt(i));
  double v = t.getDouble(i);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

void formatDim(const Tensor& t, size_t dim, int64_t offset, bool summarise, int indent, std::string& out) {
  const auto& shape = t.shape();
  const int64_t size = shape[dim];
  const int64_t stride = contiguousStrides(shape)[dim];
  out += "[";
  for (int64_t i = 0; i < size; ++i) {
    if (summarise && size > 2 * kEdgeItems && i == kEdgeItems) {
      out += dim + 1 == shape.size() ? "..., " : fmt::format("...,\n{:{}}", "", indent + 1);
      i = size - kEdgeItems - 1;
      continue;
    }
    if (dim + 1 == shape.size()) {
      out += element(t, offset + i * stride);
      if (i + 1 < size) out += ", ";
    } else {
      formatDim(t, dim + 1, offset + i * stride, summarise, indent + 1, out);
      if (i + 1 < size) out += fmt::format(",\n{:{}}", "", indent + 1);
    }
  }
  out += "]";
}

}  // namespace

std::string formatTensor(const Tensor& t) {
  if (t.rank() == 0) return element(t, 0);
  std::string out;
  formatDim(t, 0, 0, t.numel() > kSummariseAbove, 0, out);
  return out;
}

}  // namespace graphc::runtime
