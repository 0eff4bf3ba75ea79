// ONNX reductions → graphc's sum/mean/amax/amin/prod (the L1, L2, log-sum
// and sum-of-squares variants written out over them), ArgMax/ArgMin,
// CumSum, and Softmax/LogSoftmax with the opset < 13 "coerce to 2-D"
// semantics.
#include <fmt/format.h>

#include "frontend/onnx/ImportContext.h"
#include "ir/Builder.h"
#include "runtime/reference/Constants.h"

namespace graphc::frontend::onnximport {

namespace {

using ir::OpId;

/// The axes a Reduce* node reduces (an attribute, or from ReduceSum 13 and
/// every Reduce* 18 an optional input); nullopt: the node is the identity
/// (noop_with_empty_axes and no axes).
std::optional<std::vector<int64_t>> reducedAxes(NodeContext& c, ir::Value* x) {
  const bool axesAsInput = c.node.op_type() == "ReduceSum" ? c.opset >= 13 : c.opset >= 18;
  std::vector<int64_t> axes;
  if (axesAsInput) {
    if (c.present(1)) axes = c.constantInts(1, "'axes'");
  } else if (auto a = c.intsAttr("axes")) {
    axes = *a;
  }
  if (axes.empty()) {
    if (c.intAttr("noop_with_empty_axes", 0)) return std::nullopt;
    for (int64_t d = 0; d < x->type.rank(); ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) a = normalizeAxis(c, a, x->type.rank());
  return axes;
}

/// What each Reduce* computes around graphc's reduction.
enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

template <Reduce kind>
void reduce(NodeContext& c) {
  ir::Value* x = c.required(0);
  std::optional<std::vector<int64_t>> axes = reducedAxes(c, x);
  if (!axes) {
    c.setOutput(0, x);
    return;
  }
  const bool keep = c.intAttr("keepdims", 1) != 0;
  const ir::AttrMap attrs = reduceAttrs(*axes, keep);
  if (kind != Reduce::Sum && kind != Reduce::Max && kind != Reduce::Min && kind != Reduce::Prod) needFloat(c, x);
  if (x->type.dtype == ir::DType::Bool) c.unsupported("on bool", "graphc reduces numeric tensors only");
  ir::Value* y = nullptr;
  switch (kind) {
    case Reduce::Sum: y = c.op(OpId::Sum, {x}, attrs); break;
    case Reduce::Mean: y = c.op(OpId::Mean, {x}, attrs); break;
    case Reduce::Max: y = c.op(OpId::Amax, {x}, attrs); break;
    case Reduce::Min: y = c.op(OpId::Amin, {x}, attrs); break;
    case Reduce::Prod: y = c.op(OpId::Prod, {x}, attrs); break;
    case Reduce::L1: y = c.op(OpId::Sum, {c.op(OpId::Abs, {x})}, attrs); break;
    case Reduce::L2: y = c.op(OpId::Sqrt, {c.op(OpId::Sum, {c.op(OpId::Mul, {x, x})}, attrs)}); break;
    case Reduce::SumSquare: y = c.op(OpId::Sum, {c.op(OpId::Mul, {x, x})}, attrs); break;
    case Reduce::LogSum: y = c.op(OpId::Log, {c.op(OpId::Sum, {x}, attrs)}); break;
    case Reduce::LogSumExp: {
      // log Σ exp(x) = m + log Σ exp(x - m), m the maximum: no overflow.
      ir::Value* m = c.op(OpId::Amax, {x}, reduceAttrs(*axes, true));
      ir::Value* s = c.op(OpId::Sum, {c.op(OpId::Exp, {c.op(OpId::Sub, {x, m})})}, attrs);
      y = c.op(OpId::Add, {c.op(OpId::Log, {s}), keep ? m : c.op(OpId::Amax, {x}, attrs)});
      break;
    }
  }
  // graphc sums integers into i64 (as torch.sum); ONNX keeps the dtype.
  c.setOutput(0, c.cast(y, x->type.dtype));
}

/// ArgMax / ArgMin: the first index of the extremum (select_last_index = 0).
template <OpId op>
void argExtremum(NodeContext& c) {
  ir::Value* x = c.required(0);
  if (c.intAttr("select_last_index", 0) != 0)
    c.unsupported("select_last_index=1", "the last index of the extremum (select_last_index = 1) is not supported");
  if (x->type.dtype == ir::DType::Bool) c.unsupported("on bool", "graphc reduces numeric tensors only");
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", 0), std::max<int64_t>(x->type.rank(), 1));
  ir::AttrMap attrs = oneAttr("dim", ir::Attribute::ofInt(axis));
  attrs.set("keepdim", ir::Attribute::ofBool(c.intAttr("keepdims", 1) != 0));
  c.setOutput(0, c.op(op, {x}, attrs));
}

/// CumSum along the axis input; graphc sums integers in i64, ONNX keeps the dtype.
void cumSum(NodeContext& c) {
  ir::Value* x = c.required(0);
  if (x->type.dtype == ir::DType::Bool) c.unsupported("on bool", "graphc sums numeric tensors only");
  const std::vector<int64_t> axis = c.constantInts(1, "'axis'");
  if (axis.size() != 1) c.fail("'axis' must hold one value");
  ir::AttrMap attrs =
      oneAttr("dim", ir::Attribute::ofInt(normalizeAxis(c, axis[0], std::max<int64_t>(x->type.rank(), 1))));
  if (c.intAttr("exclusive", 0)) attrs.set("exclusive", ir::Attribute::ofBool(true));
  if (c.intAttr("reverse", 0)) attrs.set("reverse", ir::Attribute::ofBool(true));
  c.setOutput(0, c.cast(c.op(OpId::Cumsum, {x}, attrs), x->type.dtype));
}

/// Softmax and LogSoftmax. From opset 13 they normalise along `axis`
/// (default -1); before, along the flattened trailing dims from `axis`
/// (default 1) — the input coerced to 2-D.
template <OpId op>
void softmax(NodeContext& c) {
  ir::Value* x = c.required(0);
  needFloat(c, x);
  const int64_t rank = x->type.rank();
  const ir::AttrMap last = oneAttr("dim", ir::Attribute::ofInt(-1));
  if (rank == 0) {
    c.setOutput(0, c.op(op, {x}, last));
    return;
  }
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", c.opset >= 13 ? -1 : 1), rank);
  if (c.opset >= 13 || axis == rank - 1) {
    c.setOutput(0, c.op(op, {x}, oneAttr("dim", ir::Attribute::ofInt(axis))));
    return;
  }
  // [d0 .. d(axis-1), d(axis) .. d(n-1)] → [-1, d(axis) * ... * d(n-1)].
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d) {
    if (!x->type.shape[d].isStatic())
      c.unsupported(
          "with symbolic sizes",
          fmt::format("opset {} normalises the flattened dims from axis {}, which must be static", c.opset, axis));
    inner = checkedMul(c, inner, x->type.shape[d].size);
  }
  ir::Value* y = c.op(op, {c.op(OpId::Reshape, {x}, oneAttr("shape", ir::Attribute::ofInts({-1, inner})))}, last);
  c.setOutput(0, c.op(OpId::Reshape, {y}, oneAttr("shape", ir::shapeAttribute(x->type.shape))));
}

const OpMapping kOps[] = {
    {"ReduceSum", reduce<Reduce::Sum>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceMean", reduce<Reduce::Mean>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceMax", reduce<Reduce::Max>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceMin", reduce<Reduce::Min>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceL1", reduce<Reduce::L1>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceL2", reduce<Reduce::L2>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceLogSum", reduce<Reduce::LogSum>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceLogSumExp", reduce<Reduce::LogSumExp>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceSumSquare", reduce<Reduce::SumSquare>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ReduceProd", reduce<Reduce::Prod>, {"axes", "keepdims", "noop_with_empty_axes"}},
    {"ArgMax", argExtremum<OpId::Argmax>, {"axis", "keepdims", "select_last_index"}},
    {"ArgMin", argExtremum<OpId::Argmin>, {"axis", "keepdims", "select_last_index"}},
    {"CumSum", cumSum, {"exclusive", "reverse"}},
    {"Softmax", softmax<OpId::Softmax>, {"axis"}},
    {"LogSoftmax", softmax<OpId::LogSoftmax>, {"axis"}},
};

}  // namespace

std::span<const OpMapping> reductionOps() { return kOps; }

}  // namespace graphc::frontend::onnximport
