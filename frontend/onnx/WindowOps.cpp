// ONNX window ops → graphc's conv, conv_transpose, max_pool and avg_pool:
// Conv, ConvTranspose, MaxPool and AveragePool over 1 to 3 spatial dims,
// with strides, dilations, groups, explicit pads or auto_pad (SAME_UPPER,
// SAME_LOWER, VALID), ceil_mode and count_include_pad. ONNX's pads list
// every begin, then every end — graphc's `padding` attribute has the same
// layout.
#include <fmt/format.h>

#include "frontend/onnx/ImportContext.h"
#include "ir/Builder.h"

namespace graphc::frontend::onnximport {

namespace {

using ir::OpId;

/// An [N, C, *spatial] input with static spatial sizes; its spatial sizes.
std::vector<int64_t> spatialSizes(NodeContext& c, const ir::Value* x) {
  if (x->type.rank() < 3 || x->type.rank() > 5)
    c.fail(fmt::format("the input must be [N, C, D1, ...] with 1 to 3 spatial dims, got {}", ir::toString(x->type)));
  std::vector<int64_t> sizes;
  for (int64_t d = 2; d < x->type.rank(); ++d) {
    const ir::Dim& dim = x->type.shape[static_cast<size_t>(d)];
    if (!dim.isStatic())
      c.unsupported("with symbolic spatial sizes",
                    fmt::format("a window over the symbolic size {} is not supported", ir::toString(dim)));
    sizes.push_back(dim.size);
  }
  return sizes;
}

/// A per-spatial-dim attribute, `fallback` when absent.
std::vector<int64_t> perDim(NodeContext& c, const char* name, size_t spatial, int64_t fallback) {
  std::optional<std::vector<int64_t>> v = c.intsAttr(name);
  if (!v) return std::vector<int64_t>(spatial, fallback);
  if (v->size() != spatial) c.fail(fmt::format("'{}' has {} values for {} spatial dims", name, v->size(), spatial));
  return *v;
}

struct Window {
  std::vector<int64_t> kernel, stride, dilation, pads;  // pads: begins, then ends
};

/// The window of a Conv or pool node: auto_pad's SAME_* pads total
/// max((ceil(in / stride) − 1) · stride + extent − in, 0), the odd one at
/// the end (UPPER) or the beginning (LOWER).
Window windowOf(NodeContext& c, const std::vector<int64_t>& in, std::vector<int64_t> kernel) {
  const size_t spatial = in.size();
  Window w;
  w.kernel = std::move(kernel);
  if (w.kernel.size() != spatial)
    c.fail(fmt::format("the kernel has {} dims for {} spatial dims", w.kernel.size(), spatial));
  w.stride = perDim(c, "strides", spatial, 1);
  w.dilation = perDim(c, "dilations", spatial, 1);
  for (size_t k = 0; k < spatial; ++k)
    if (w.kernel[k] < 1 || w.stride[k] < 1 || w.dilation[k] < 1)
      c.fail("kernel sizes, strides and dilations must be at least 1");
  const std::string autoPad = c.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    w.pads = perDim(c, "pads", 2 * spatial, 0);
    for (int64_t p : w.pads)
      if (p < 0) c.fail(fmt::format("pads must not be negative, got {}", p));
  } else if (autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    w.pads.assign(2 * spatial, 0);
    for (size_t k = 0; k < spatial; ++k) {
      const int64_t out = (in[k] + w.stride[k] - 1) / w.stride[k];
      const int64_t extent = checkedAdd(c, checkedMul(c, w.dilation[k], w.kernel[k] - 1), 1);
      const int64_t total = std::max<int64_t>(checkedAdd(c, checkedMul(c, out - 1, w.stride[k]), extent) - in[k], 0);
      const int64_t small = total / 2;
      w.pads[k] = autoPad == "SAME_UPPER" ? small : total - small;
      w.pads[k + spatial] = total - w.pads[k];
    }
  } else {
    c.fail(fmt::format("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got \"{}\"", autoPad));
  }
  return w;
}

ir::AttrMap geometry(const Window& w, bool withDilation) {
  ir::AttrMap a;
  a.set("stride", ir::Attribute::ofInts(w.stride));
  a.set("padding", ir::Attribute::ofInts(w.pads));
  if (withDilation) a.set("dilation", ir::Attribute::ofInts(w.dilation));
  return a;
}

/// The kernel's spatial sizes: kernel_shape, or the weight's trailing dims.
std::vector<int64_t> weightKernel(NodeContext& c, const ir::Value* weight) {
  if (weight->type.rank() < 3 || !weight->type.isStatic())
    c.fail(fmt::format("the weight must be a static [M, C/group, k1, ...], got {}", ir::toString(weight->type)));
  std::vector<int64_t> fromWeight;
  for (int64_t d = 2; d < weight->type.rank(); ++d)
    fromWeight.push_back(weight->type.shape[static_cast<size_t>(d)].size);
  if (auto k = c.intsAttr("kernel_shape"); k && *k != fromWeight)
    c.fail(
        fmt::format("'kernel_shape' [{}] differs from the weight {}", fmt::join(*k, ", "), ir::toString(weight->type)));
  return fromWeight;
}

void conv(NodeContext& c) {
  ir::Value* x = c.required(0);
  ir::Value* w = c.required(1);
  needFloat(c, x);
  const Window window = windowOf(c, spatialSizes(c, x), weightKernel(c, w));
  ir::AttrMap attrs = geometry(window, true);
  attrs.set("groups", ir::Attribute::ofInt(c.intAttr("group", 1)));
  std::vector<ir::Value*> operands{x, w};
  if (c.present(2)) operands.push_back(c.input(2));
  c.setOutput(0, c.op(OpId::Conv, operands, attrs));
}

/// ConvTranspose: output_shape, when given, fixes the pads (total
/// stride·(in − 1) + output_padding + extent − output_shape, the odd one
/// at the beginning unless auto_pad is SAME_UPPER, as the spec says); so
/// does auto_pad SAME_* with output_shape = in · stride.
void convTranspose(NodeContext& c) {
  ir::Value* x = c.required(0);
  ir::Value* w = c.required(1);
  needFloat(c, x);
  const std::vector<int64_t> in = spatialSizes(c, x);
  const std::vector<int64_t> kernel = weightKernel(c, w);
  const size_t spatial = in.size();
  if (kernel.size() != spatial)
    c.fail(fmt::format("the kernel has {} dims for {} spatial dims", kernel.size(), spatial));
  Window window;
  window.kernel = kernel;
  window.stride = perDim(c, "strides", spatial, 1);
  window.dilation = perDim(c, "dilations", spatial, 1);
  const std::vector<int64_t> outputPadding = perDim(c, "output_padding", spatial, 0);
  for (size_t k = 0; k < spatial; ++k)
    if (window.stride[k] < 1 || window.dilation[k] < 1) c.fail("strides and dilations must be at least 1");
  const std::string autoPad = c.stringAttr("auto_pad", "NOTSET");
  std::optional<std::vector<int64_t>> outputShape = c.intsAttr("output_shape");
  if (outputShape && outputShape->size() == spatial + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (!outputShape && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
    outputShape.emplace();
    for (size_t k = 0; k < spatial; ++k) outputShape->push_back(checkedMul(c, in[k], window.stride[k]));
  }
  if (outputShape) {
    if (outputShape->size() != spatial)
      c.fail(fmt::format("'output_shape' has {} values for {} spatial dims", outputShape->size(), spatial));
    window.pads.assign(2 * spatial, 0);
    for (size_t k = 0; k < spatial; ++k) {
      const int64_t extent = checkedAdd(c, checkedMul(c, window.dilation[k], kernel[k] - 1), 1);
      const int64_t total = checkedMul(c, window.stride[k], in[k] - 1) + outputPadding[k] + extent - (*outputShape)[k];
      if (total < 0)
        c.unsupported("output_shape larger than the full output",
                      fmt::format("'output_shape' {} needs negative padding", (*outputShape)[k]));
      const int64_t half = total / 2;
      window.pads[k] = autoPad == "SAME_UPPER" ? half : total - half;
      window.pads[k + spatial] = total - window.pads[k];
    }
  } else if (autoPad == "VALID") {
    window.pads.assign(2 * spatial, 0);
  } else {
    window.pads = perDim(c, "pads", 2 * spatial, 0);
    for (int64_t p : window.pads)
      if (p < 0) c.fail(fmt::format("pads must not be negative, got {}", p));
  }
  ir::AttrMap attrs = geometry(window, true);
  attrs.set("output_padding", ir::Attribute::ofInts(outputPadding));
  attrs.set("groups", ir::Attribute::ofInt(c.intAttr("group", 1)));
  std::vector<ir::Value*> operands{x, w};
  if (c.present(2)) operands.push_back(c.input(2));
  c.setOutput(0, c.op(OpId::ConvTranspose, operands, attrs));
}

template <OpId op>
void pool(NodeContext& c) {
  ir::Value* x = c.required(0);
  std::optional<std::vector<int64_t>> kernel = c.intsAttr("kernel_shape");
  if (!kernel) c.fail("'kernel_shape' is required");
  const Window window = windowOf(c, spatialSizes(c, x), *kernel);
  ir::AttrMap attrs = geometry(window, op == OpId::MaxPool);
  attrs.set("kernel", ir::Attribute::ofInts(window.kernel));
  if (c.intAttr("ceil_mode", 0)) attrs.set("ceil_mode", ir::Attribute::ofBool(true));
  if (op == OpId::MaxPool) {
    if (c.intAttr("storage_order", 0) != 0) c.unsupported("storage_order=1", "column-major indices are not supported");
    if (c.outputWanted(1)) c.unsupported("Indices output", "MaxPool's indices output is not supported");
    if (x->type.dtype == ir::DType::Bool) c.unsupported("on bool", "graphc pools numeric tensors only");
  } else {
    needFloat(c, x);
    for (int64_t d : window.dilation)
      if (d != 1) c.unsupported("with dilations", "AveragePool with dilations is not supported");
    if (c.intAttr("count_include_pad", 0)) attrs.set("count_include_pad", ir::Attribute::ofBool(true));
  }
  for (size_t k = 0; k < window.kernel.size(); ++k)
    if (2 * std::max(window.pads[k], window.pads[k + window.kernel.size()]) > window.kernel[k])
      c.unsupported("pads over half the kernel", "pads larger than half the kernel (a window of padding alone)");
  c.setOutput(0, c.op(op, {x}, attrs));
}

const OpMapping kOps[] = {
    {"Conv", conv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
    {"ConvTranspose",
     convTranspose,
     {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}},
    {"MaxPool",
     pool<OpId::MaxPool>,
     {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}},
    {"AveragePool",
     pool<OpId::AvgPool>,
     {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"}},
};

}  // namespace

std::span<const OpMapping> windowOps() { return kOps; }

}  // namespace graphc::frontend::onnximport
