// ONNX shape and data-movement ops → graphc's shape ops (reshape, permute,
// squeeze, unsqueeze, expand, slice, concat), and the ops whose result is
// known when the graph is built (Shape, Size, ConstantOfShape, Range,
// EyeLike) → constants. Shapes, axes, starts and pads must be known at
// import time (NodeContext::constantInts).
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "frontend/onnx/ImportContext.h"
#include "ir/Builder.h"
#include "runtime/reference/Constants.h"

namespace graphc::frontend::onnximport {

namespace {

using ir::OpId;

ir::Value* expand(NodeContext& c, ir::Value* x, const ir::Shape& shape) {
  if (x->type.shape == shape) return x;
  return c.op(OpId::Expand, {x}, oneAttr("shape", ir::shapeAttribute(shape)));
}

ir::Value* slice(NodeContext& c, ir::Value* x, int64_t dim, int64_t start, int64_t end, int64_t step = 1) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  a.set("start", ir::Attribute::ofInt(start));
  a.set("end", ir::Attribute::ofInt(end));
  if (step != 1) a.set("step", ir::Attribute::ofInt(step));
  return c.op(OpId::Slice, {x}, a);
}

ir::Value* concat(NodeContext& c, const std::vector<ir::Value*>& parts, int64_t dim) {
  if (parts.size() == 1) return parts[0];
  return c.op(OpId::Concat, parts, oneAttr("dim", ir::Attribute::ofInt(dim)));
}

/// A static size of x's dim d; fails (unsupported) for a symbolic one.
int64_t staticDim(NodeContext& c, const ir::Value* x, int64_t d, std::string_view what) {
  const ir::Dim& dim = x->type.shape[static_cast<size_t>(d)];
  if (!dim.isStatic())
    c.unsupported("with symbolic sizes",
                  fmt::format("{} of the symbolic size {} is not supported", what, ir::toString(dim)));
  return dim.size;
}

/// A rows × cols constant the importer makes (a mask, an identity).
void checkImportTimeSize(NodeContext& c, int64_t rows, int64_t cols) {
  if (rows > 0 && cols > kMaxImportTimeElements / rows)
    c.unsupported("of over 4M elements",
                  fmt::format("a {} x {} constant is more than graphc makes at import time", rows, cols));
}

// ---- identity, constants ------------------------------------------------------

void identity(NodeContext& c) {
  if (c.isShape(0))
    c.setShapeOutput(0, c.shapeInput(0, "the input"));
  else
    c.setOutput(0, c.required(0));
}

void constant(NodeContext& c) {
  if (c.node.attribute_size() != 1) c.fail("needs exactly one value attribute");
  const onnx::AttributeProto& a = c.node.attribute(0);
  runtime::Tensor t;
  if (a.name() == "value") {
    t = *c.tensorAttr("value");
  } else if (a.name() == "value_float") {
    t = runtime::Tensor(ir::DType::F32, {});
    t.setDouble(0, a.f());
  } else if (a.name() == "value_int") {
    t = runtime::Tensor(ir::DType::I64, {});
    t.setInt(0, a.i());
  } else if (a.name() == "value_floats") {
    t = runtime::Tensor(ir::DType::F32, {a.floats_size()});
    for (int k = 0; k < a.floats_size(); ++k) t.setDouble(k, a.floats(k));
  } else if (a.name() == "value_ints") {
    t = runtime::Tensor(ir::DType::I64, {a.ints_size()});
    for (int k = 0; k < a.ints_size(); ++k) t.setInt(k, a.ints(k));
  } else {
    c.unsupported("attribute " + a.name(), fmt::format("a constant given as '{}' is not supported", a.name()));
  }
  c.setOutput(0, c.constantOf(t));
}

void shape(NodeContext& c) {
  if (c.isShape(0)) {  // the shape of a shape: its length
    const ShapeValue v = c.shapeInput(0, "the input");
    ShapeValue length;
    if (!v.scalar) length.dims.push_back(ir::Dim::of(static_cast<int64_t>(v.dims.size())));
    c.setShapeOutput(0, length);
    return;
  }
  ir::Value* x = c.required(0);
  const int64_t rank = x->type.rank();
  auto clampEnd = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clampEnd(c.intAttr("start", 0));
  const int64_t end = clampEnd(c.intAttr("end", rank));
  ShapeValue v;
  for (int64_t d = start; d < end; ++d) v.dims.push_back(x->type.shape[d]);
  c.setShapeOutput(0, v);  // a constant when every size is static
}

void size(NodeContext& c) {
  ir::Value* x = c.required(0);
  int64_t n = 1;
  for (int64_t d = 0; d < x->type.rank(); ++d) n *= staticDim(c, x, d, "Size");
  runtime::Tensor t(ir::DType::I64, {});
  t.setInt(0, n);
  c.setOutput(0, c.constantOf(t));
}

void constantOfShape(NodeContext& c) {
  const ShapeValue shape = c.shapeInput(0, "the shape");
  runtime::Tensor value(ir::DType::F32, {});
  if (auto v = c.tensorAttr("value")) {
    if (v->numel() != 1) c.fail(fmt::format("'value' must hold one element, it is {}", ir::toString(v->type())));
    value = v->reshaped({});
  }
  for (const ir::Dim& d : shape.dims)
    if (d.isStatic() && d.size < 0) c.fail(fmt::format("the shape has a negative size {}", d.size));
  c.setOutput(0, expand(c, c.constantOf(value), shape.dims));
}

/// Range: known bounds make a constant; a limit that is a symbolic size
/// (torch.arange(batch) in a dynamic-batch export) with start 0 and delta
/// 1 becomes iota over that size.
/// A scalar operand of Range that is a size: a symbolic shape element, or
/// an integer constant.
std::optional<ir::Dim> rangeBound(NodeContext& c, size_t k, const char* what) {
  if (!c.isShape(k)) return std::nullopt;
  const ShapeValue v = c.shapeInput(k, what);
  if (!v.scalar || v.dims.size() != 1) c.fail(fmt::format("{} must be a scalar", what));
  return v.dims[0];
}

/// Range: a constant when start and limit are known at import time; an
/// iota when one is a symbolic size (a decode step's positions run from the
/// cache's length P to P+1), its length limit - start over the step, which
/// must be an exact size.
void range(NodeContext& c) {
  runtime::Tensor delta = c.requireConstant(2, "'delta'");
  if (delta.numel() != 1) c.fail(fmt::format("'delta' must be a scalar, got {}", ir::toString(delta.type())));
  const double d = delta.getDouble(0);
  if (d == 0) c.fail("'delta' is zero");
  std::optional<ir::Dim> startSize = rangeBound(c, 0, "'start'"), limitSize = rangeBound(c, 1, "'limit'");
  if (startSize || limitSize) {
    const ir::DType dtype = delta.dtype();  // ONNX: start, limit and delta share one
    if (ir::isFloat(dtype) || d != std::floor(d))
      c.unsupported("over symbolic sizes in floats", "a range over symbolic sizes must be of integers");
    auto sizeOf = [&](size_t k, const std::optional<ir::Dim>& s, const char* what) {
      if (s) return *s;
      runtime::Tensor t = c.requireConstant(k, what);
      if (t.numel() != 1) c.fail(fmt::format("{} must be a scalar", what));
      if (t.getInt(0) < 0) c.unsupported("from a negative bound", "a range over symbolic sizes must not go below 0");
      return ir::Dim::of(t.getInt(0));
    };
    const ir::Dim start = sizeOf(0, startSize, "'start'"), limit = sizeOf(1, limitSize, "'limit'");
    const auto step = static_cast<int64_t>(d);
    std::optional<ir::Dim> span = step > 0 ? ir::subtract(limit, start) : ir::subtract(start, limit);
    std::optional<ir::Dim> count = span ? ir::divide(*span, ir::Dim::of(step > 0 ? step : -step)) : std::nullopt;
    if (!count)
      c.unsupported("of a symbolic length that is not a size",
                    fmt::format("the range from {} to {} by {} has no length graphc can write", ir::toString(start),
                                ir::toString(limit), step));
    ir::AttrMap attrs = oneAttr("dim", ir::Attribute::ofInt(0));
    attrs.set("step", ir::Attribute::ofInt(step));
    if (start.isStatic()) attrs.set("start", ir::Attribute::ofInt(start.size));
    ir::Node* iota =
        ir::insertNode(c.region, c.region.nodes().size(), OpId::Iota, {}, std::move(attrs), {{dtype, {*count}}}, c.loc);
    c.setOutput(0, start.isStatic() ? iota->result() : c.op(OpId::Add, {iota->result(), c.sizeValue(start, dtype)}));
    return;
  }
  runtime::Tensor start = c.requireConstant(0, "'start'");
  if (start.numel() != 1)
    c.fail(fmt::format("'start', 'limit' and 'delta' must be scalars, got {}", ir::toString(start.type())));
  runtime::Tensor limit = c.requireConstant(1, "'limit'");
  if (limit.numel() != 1)
    c.fail(fmt::format("'start', 'limit' and 'delta' must be scalars, got {}", ir::toString(limit.type())));
  const double count = std::ceil((limit.getDouble(0) - start.getDouble(0)) / d);
  if (!(count <= static_cast<double>(kMaxImportTimeElements)))
    c.unsupported("of over 4M elements",
                  fmt::format("the range has {} elements (graphc makes at most {} at import time)", count,
                              kMaxImportTimeElements));
  const int64_t n = std::max<int64_t>(static_cast<int64_t>(count), 0);
  runtime::Tensor t(start.dtype(), {n});
  for (int64_t i = 0; i < n; ++i) {
    if (ir::isFloat(start.dtype()))
      t.setDouble(i, start.getDouble(0) + static_cast<double>(i) * d);
    else
      t.setInt(i, checkedAdd(c, start.getInt(0), checkedMul(c, i, delta.getInt(0))));
  }
  c.setOutput(0, c.constantOf(t));
}

void eyeLike(NodeContext& c) {
  ir::Value* x = c.required(0);
  if (x->type.rank() != 2) c.fail(fmt::format("the input must be 2-D, it is {}", ir::toString(x->type)));
  ir::DType dtype = x->type.dtype;
  if (c.has("dtype")) {
    const int32_t to = static_cast<int32_t>(c.intAttr("dtype", 1));
    auto t = dtypeOf(to);
    if (!t) c.unsupported("dtype " + onnxTypeName(to), fmt::format("dtype {} is not supported", onnxTypeName(to)));
    dtype = *t;
  }
  const int64_t rows = staticDim(c, x, 0, "EyeLike"), cols = staticDim(c, x, 1, "EyeLike"), k = c.intAttr("k", 0);
  checkImportTimeSize(c, rows, cols);
  runtime::Tensor t(dtype, {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) t.setDouble(i * cols + i + k, 1);
  c.setOutput(0, c.constantOf(t));
}

// ---- reshaping ----------------------------------------------------------------

void reshapeOp(NodeContext& c) {
  if (c.isShape(0)) {  // a shape kept 1-D ([-1], [n]) or a one-size shape made a scalar ([])
    ShapeValue v = c.shapeInput(0, "the input");
    const std::vector<int64_t> target = c.constantInts(1, "the shape");
    const bool toScalar = target.empty(),
               toVector = target.size() == 1 && (target[0] == -1 || target[0] == static_cast<int64_t>(v.dims.size()));
    if (!(toVector || (toScalar && v.dims.size() == 1)))
      c.unsupported("of a symbolic shape to more dims", "reshaping a symbolic shape beyond 1-D is not supported");
    v.scalar = toScalar;
    c.setShapeOutput(0, v);
    return;
  }
  ir::Value* x = c.required(0);
  const ShapeValue target = c.shapeInput(1, "the shape");
  const bool allowZero = c.intAttr("allowzero", 0) != 0;
  ir::Shape shape;
  for (size_t k = 0; k < target.dims.size(); ++k) {
    if (target.dims[k].isStatic(0) && !allowZero) {  // 0 copies the input's dim
      if (k >= x->type.shape.size())
        c.fail(fmt::format("shape entry {} is 0 but the input has rank {}", k, x->type.rank()));
      shape.push_back(x->type.shape[k]);
    } else {
      shape.push_back(target.dims[k]);
    }
  }
  c.setOutput(0, c.op(OpId::Reshape, {x}, oneAttr("shape", ir::shapeAttribute(shape))));
}

void flatten(NodeContext& c) {
  ir::Value* x = c.required(0);
  const int64_t rank = x->type.rank();
  int64_t axis = c.intAttr("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) c.fail(fmt::format("axis {} is out of range for rank {}", c.intAttr("axis", 1), rank));
  // Each side is a product of sizes; one symbolic side becomes -1.
  auto product = [&](int64_t from, int64_t to) -> std::optional<int64_t> {
    int64_t p = 1;
    for (int64_t d = from; d < to; ++d) {
      if (!x->type.shape[d].isStatic()) return std::nullopt;
      p = checkedMul(c, p, x->type.shape[d].size);
    }
    return p;
  };
  std::optional<int64_t> outer = product(0, axis), inner = product(axis, rank);
  if (!outer && !inner)
    c.unsupported("with symbolic sizes",
                  fmt::format("flattening {} at axis {} needs one side static", ir::toString(x->type), axis));
  c.setOutput(
      0, c.op(OpId::Reshape, {x}, oneAttr("shape", ir::Attribute::ofInts({outer.value_or(-1), inner.value_or(-1)}))));
}

void transpose(NodeContext& c) {
  ir::Value* x = c.required(0);
  std::vector<int64_t> perm;
  if (auto p = c.intsAttr("perm"))
    perm = *p;
  else
    for (int64_t d = x->type.rank(); d-- > 0;) perm.push_back(d);
  c.setOutput(0, x->type.rank() == 0 ? x : c.op(OpId::Permute, {x}, oneAttr("dims", ir::Attribute::ofInts(perm))));
}

/// Squeeze/Unsqueeze axes: an attribute before opset 13, an input after.
std::optional<std::vector<int64_t>> axesOf(NodeContext& c, const char* what) {
  if (c.opset >= 13) {
    if (!c.input(1)) return std::nullopt;
    return c.constantInts(1, what);
  }
  return c.intsAttr("axes");
}

void squeeze(NodeContext& c) {
  if (c.isShape(0)) {  // [d] -> d
    ShapeValue v = c.shapeInput(0, "the input");
    if (v.scalar || v.dims.size() != 1) c.fail("squeezing a shape needs one element");
    v.scalar = true;
    c.setShapeOutput(0, v);
    return;
  }
  ir::Value* x = c.required(0);
  std::optional<std::vector<int64_t>> axes = axesOf(c, "'axes'");
  if (!axes) {  // every dim of size 1
    axes.emplace();
    for (int64_t d = 0; d < x->type.rank(); ++d)
      if (x->type.shape[d].isStatic(1)) axes->push_back(d);
  }
  for (int64_t& a : *axes) {
    a = normalizeAxis(c, a, x->type.rank());
    if (!x->type.shape[a].isStatic(1)) c.fail(fmt::format("dim {} of {} is not 1", a, ir::toString(x->type)));
  }
  std::sort(axes->rbegin(), axes->rend());
  ir::Value* y = x;
  for (int64_t a : *axes) y = c.op(OpId::Squeeze, {y}, oneAttr("dim", ir::Attribute::ofInt(a)));
  c.setOutput(0, y);
}

void unsqueeze(NodeContext& c) {
  std::optional<std::vector<int64_t>> axes = axesOf(c, "'axes'");
  if (!axes) c.fail("'axes' is required");
  if (c.isShape(0) && c.shapeInput(0, "the input").scalar && axes->size() == 1) {  // d -> [d]: still a shape
    ShapeValue v = c.shapeInput(0, "the input");
    v.scalar = false;
    c.setShapeOutput(0, v);
    return;
  }
  ir::Value* x = c.required(0);  // a 1-D shape made 2-D: its sizes as data
  const int64_t rank = x->type.rank() + static_cast<int64_t>(axes->size());
  for (int64_t& a : *axes) a = normalizeAxis(c, a, rank);
  std::sort(axes->begin(), axes->end());
  if (std::adjacent_find(axes->begin(), axes->end()) != axes->end()) c.fail("'axes' names a dim twice");
  ir::Value* y = x;
  for (int64_t a : *axes) y = c.op(OpId::Unsqueeze, {y}, oneAttr("dim", ir::Attribute::ofInt(a)));
  c.setOutput(0, y);
}

/// Expand broadcasts both ways: a 1 in the target keeps the input's dim.
void expandOp(NodeContext& c) {
  ir::Value* x = c.required(0);
  const ir::Shape target = c.shapeInput(1, "the shape").dims;
  const size_t rank = std::max(target.size(), x->type.shape.size());
  ir::Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t ti = static_cast<int64_t>(k) - static_cast<int64_t>(rank - target.size());
    const int64_t xi = static_cast<int64_t>(k) - static_cast<int64_t>(rank - x->type.shape.size());
    const ir::Dim have = xi >= 0 ? x->type.shape[xi] : ir::Dim::of(1);
    const ir::Dim want = ti >= 0 ? target[ti] : ir::Dim::of(1);
    if (want.isStatic(1))
      out[k] = have;
    else if (have.isStatic(1) || have == want)
      out[k] = want;
    else
      c.fail(fmt::format("cannot expand {} to the shape {}", ir::toString(x->type), ir::toString(target)));
  }
  c.setOutput(0, expand(c, x, out));
}

void concatOp(NodeContext& c) {
  bool shapes = false;
  for (size_t k = 0; k < c.numInputs(); ++k) shapes |= c.isShape(k);
  if (shapes) {  // shapes joined end to end
    ShapeValue joined;
    for (size_t k = 0; k < c.numInputs(); ++k) {
      ShapeValue part = c.shapeInput(k, "a part");
      if (part.scalar) c.fail("concatenated shapes must be 1-D");
      joined.dims.insert(joined.dims.end(), part.dims.begin(), part.dims.end());
    }
    c.setShapeOutput(0, joined);
    return;
  }
  std::vector<ir::Value*> parts{c.required(0)};  // at least one (a fuzzer's Concat had none)
  for (size_t k = 1; k < c.numInputs(); ++k) parts.push_back(c.required(k));
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", 0), parts[0]->type.rank());
  c.setOutput(0, c.op(OpId::Concat, parts, oneAttr("dim", ir::Attribute::ofInt(axis))));
}

void split(NodeContext& c) {
  ir::Value* x = c.required(0);
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", 0), x->type.rank());
  const int64_t total = staticDim(c, x, axis, "Split");
  std::vector<int64_t> sizes;
  if (c.opset >= 13 && c.input(1))
    sizes = c.constantInts(1, "'split'");
  else if (auto s = c.intsAttr("split"))
    sizes = *s;
  const int64_t parts = static_cast<int64_t>(c.numOutputs());
  if (c.has("num_outputs") && c.intAttr("num_outputs", 1) != parts)
    c.fail(fmt::format("'num_outputs' is {}, the node has {} outputs", c.intAttr("num_outputs", 1), parts));
  if (sizes.empty()) {  // equal parts, the last one smaller (opset 18)
    if (parts <= 0) c.fail("no outputs");
    const int64_t each = total / parts + (total % parts != 0);
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::clamp<int64_t>(total - checkedMul(c, k, each), 0, each));
  }
  if (static_cast<int64_t>(sizes.size()) != static_cast<int64_t>(c.numOutputs()))
    c.fail(fmt::format("{} split sizes for {} outputs", sizes.size(), c.numOutputs()));
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] < 0 || sizes[k] > total - start)
      c.fail(fmt::format("split sizes [{}] do not fit dim {}", fmt::join(sizes, ", "), total));
    if (c.outputWanted(k)) c.setOutput(k, slice(c, x, axis, start, start + sizes[k]));
    start += sizes[k];
  }
  if (start != total) c.fail(fmt::format("split sizes [{}] do not add up to {}", fmt::join(sizes, ", "), total));
}

/// Slice: starts/ends/axes/steps are attributes before opset 10, inputs
/// after; bounds clamp as in NumPy.
void sliceOp(NodeContext& c) {
  if (c.isShape(0)) {  // a range of a shape's sizes
    ShapeValue v = c.shapeInput(0, "the input");
    const int64_t n = static_cast<int64_t>(v.dims.size());
    if (v.scalar) c.fail("cannot slice a scalar");
    std::vector<int64_t> starts = c.constantInts(1, "'starts'"), ends = c.constantInts(2, "'ends'");
    std::vector<int64_t> steps = c.present(4) ? c.constantInts(4, "'steps'") : std::vector<int64_t>{1};
    if (starts.size() != 1 || ends.size() != 1 || steps.size() != 1 || steps[0] != 1)
      c.unsupported("of a symbolic shape", "only a unit-step 1-D slice of a symbolic shape is supported");
    auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
    ShapeValue out;
    for (int64_t i = clampIndex(starts[0]); i < clampIndex(ends[0]); ++i)
      out.dims.push_back(v.dims[static_cast<size_t>(i)]);
    c.setShapeOutput(0, out);
    return;
  }
  ir::Value* x = c.required(0);
  const int64_t rank = x->type.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.intsAttr("starts").value_or(std::vector<int64_t>{});
    ends = c.intsAttr("ends").value_or(std::vector<int64_t>{});
    if (auto a = c.intsAttr("axes")) axes = *a;
  } else {
    starts = c.constantInts(1, "'starts'");
    ends = c.constantInts(2, "'ends'");
    if (c.present(3)) axes = c.constantInts(3, "'axes'");
    if (c.present(4)) steps = c.constantInts(4, "'steps'");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("'starts', 'ends', 'axes' and 'steps' differ in length");
  ir::Value* y = x;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t axis = normalizeAxis(c, axes[k], rank);
    if (steps[k] == 0) c.fail("a step is 0");
    const ir::Dim& dim = x->type.shape[axis];
    const bool toTheEnd = ends[k] >= std::numeric_limits<int32_t>::max();
    if (!dim.isStatic() && steps[k] == 1 && starts[k] >= 0 && (toTheEnd || ends[k] < 0)) {
      // From a start to the end of a symbolic dim, or to j before it: a
      // size S - start - j, which a run whose S is too small reports.
      if (starts[k] == 0 && toTheEnd) continue;  // the whole dim
      ir::AttrMap a = oneAttr("dim", ir::Attribute::ofInt(axis));
      a.set("start", ir::Attribute::ofInt(starts[k]));
      if (!toTheEnd) a.set("end", ir::Attribute::ofInt(ends[k]));
      y = c.op(OpId::Slice, {y}, a);
      continue;
    }
    if (!dim.isStatic()) staticDim(c, x, axis, "Slice");
    if (steps[k] < 0) {
      // Walking down: ONNX clamps the start into [0, size - 1] and the end
      // into [-1, size - 1], -1 being past the first element; graphc's
      // slice takes Python's bounds, where an end of -1 would count from
      // the end, so "past the first" is the end left out.
      if (steps[k] == std::numeric_limits<int64_t>::min()) c.fail("a step is INT64_MIN");
      auto clampTo = [&](int64_t i, int64_t lo) {
        return std::clamp<int64_t>(i < 0 ? i + dim.size : i, lo, std::max<int64_t>(dim.size - 1, lo));
      };
      const int64_t start = clampTo(starts[k], 0), end = clampTo(ends[k], -1);
      ir::AttrMap a = oneAttr("dim", ir::Attribute::ofInt(axis));
      a.set("start", ir::Attribute::ofInt(start));
      if (end >= 0) a.set("end", ir::Attribute::ofInt(end));
      a.set("step", ir::Attribute::ofInt(steps[k]));
      y = c.op(OpId::Slice, {y}, a);
      continue;
    }
    auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + dim.size : i, 0, dim.size); };
    const int64_t start = clampIndex(starts[k]), end = clampIndex(ends[k]);
    if (start == 0 && end == dim.size && steps[k] == 1) continue;
    y = slice(c, y, axis, start, std::max(start, end), steps[k]);
  }
  c.setOutput(0, y);
}

/// Tile: each repeated dim as unsqueeze → expand → reshape (index maps
/// only, so it fuses with what reads it).
void tile(NodeContext& c) {
  ir::Value* x = c.required(0);
  std::vector<int64_t> repeats = c.constantInts(1, "'repeats'");
  if (static_cast<int64_t>(repeats.size()) != x->type.rank())
    c.fail(fmt::format("{} repeats for rank {}", repeats.size(), x->type.rank()));
  ir::Value* y = x;
  for (int64_t d = 0; d < x->type.rank(); ++d) {
    if (repeats[d] < 0) c.fail(fmt::format("repeat {} is negative", repeats[d]));
    if (repeats[d] == 1) continue;
    const int64_t size = staticDim(c, x, d, "Tile");
    ir::Shape shape = y->type.shape;
    shape.insert(shape.begin() + d, ir::Dim::of(repeats[d]));
    ir::Value* wide = expand(c, c.op(OpId::Unsqueeze, {y}, oneAttr("dim", ir::Attribute::ofInt(d))), shape);
    shape.erase(shape.begin() + d);
    shape[d] = ir::Dim::of(checkedMul(c, size, repeats[d]));
    y = reshape(c, wide, shape);
  }
  c.setOutput(0, y);
}

/// Pad, modes constant, edge and reflect: per padded dim, a concat of the
/// pieces (a broadcast fill value, edge slices, mirrored single slices);
/// negative pads slice.
void pad(NodeContext& c) {
  ir::Value* x = c.required(0);
  const int64_t rank = x->type.rank();
  const std::string mode = c.stringAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    c.unsupported("mode " + mode, fmt::format("mode \"{}\" is not supported", mode));
  std::vector<int64_t> pads;
  double fill = 0;
  std::vector<int64_t> axes;
  if (c.opset < 11) {
    pads = c.intsAttr("pads").value_or(std::vector<int64_t>{});
    fill = c.floatAttr("value", 0);
  } else {
    pads = c.constantInts(1, "'pads'");
    if (c.present(2)) {
      runtime::Tensor v = c.requireConstant(2, "'constant_value'");
      if (v.numel() != 1) c.fail("'constant_value' must be a scalar");
      fill = v.getDouble(0);
    }
    if (c.present(3)) axes = c.constantInts(3, "'axes'");
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  if (pads.size() != 2 * axes.size()) c.fail(fmt::format("{} pads for {} axes", pads.size(), axes.size()));
  ir::Value* y = x;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = normalizeAxis(c, axes[k], rank);
    int64_t before = pads[k], after = pads[k + axes.size()];
    if (before == 0 && after == 0) continue;
    int64_t size = staticDim(c, y, d, "Pad");
    if (before < -size || after < -size)
      c.fail(fmt::format("pads ({}, {}) remove more than the dim {} holds", before, after, size));
    if (before < 0 || after < 0) {  // crop first
      const int64_t start = std::max<int64_t>(-before, 0), end = size - std::max<int64_t>(-after, 0);
      if (end < start) c.fail("negative pads remove more than the dim holds");
      y = slice(c, y, d, start, end);
      size = end - start;
      before = std::max<int64_t>(before, 0);
      after = std::max<int64_t>(after, 0);
    }
    if (mode != "constant" && size == 0) c.fail(fmt::format("mode \"{}\" pads an empty dim", mode));
    if (mode == "reflect" && (before >= size || after >= size))
      c.fail(fmt::format("reflect pads ({}, {}) must be smaller than the dim {}", before, after, size));
    // A reflected pad is one slice per element: a bound keeps the graph small.
    if (mode == "reflect" && std::max(before, after) > 256)
      c.unsupported("reflect pads over 256",
                    fmt::format("reflect pads ({}, {}) over 256 are not supported", before, after));
    auto piece = [&](int64_t count, bool leading) -> std::vector<ir::Value*> {
      std::vector<ir::Value*> parts;
      if (count == 0) return parts;
      if (mode == "constant") {
        ir::Shape shape = y->type.shape;
        shape[d] = ir::Dim::of(count);
        parts.push_back(expand(c, c.scalarLike(y, fill), shape));
      } else if (mode == "edge") {
        ir::Value* edge = leading ? slice(c, y, d, 0, 1) : slice(c, y, d, size - 1, size);
        ir::Shape shape = y->type.shape;
        shape[d] = ir::Dim::of(count);
        parts.push_back(expand(c, edge, shape));
      } else {  // reflect: x[count], ..., x[1] before; x[n-2], ..., x[n-1-count] after
        for (int64_t i = 0; i < count; ++i) {
          const int64_t at = leading ? count - i : size - 2 - i;
          parts.push_back(slice(c, y, d, at, at + 1));
        }
      }
      return parts;
    };
    std::vector<ir::Value*> parts = piece(before, true);
    parts.push_back(y);
    for (ir::Value* p : piece(after, false)) parts.push_back(p);
    y = concat(c, parts, d);
  }
  c.setOutput(0, y);
}

/// Gather → index_select (numpy.take), GatherElements → gather
/// (torch.gather); both read negative indices from the end.
template <OpId op>
void gatherOp(NodeContext& c) {
  if (op == OpId::IndexSelect && c.isShape(0)) {  // some sizes of a shape
    const ShapeValue v = c.shapeInput(0, "the input");
    const runtime::Tensor index = c.requireConstant(1, "the indices of a symbolic shape");
    if (index.rank() > 1) c.fail("indices of a shape must have rank 0 or 1");
    ShapeValue out;
    out.scalar = index.rank() == 0;
    const int64_t n = static_cast<int64_t>(v.dims.size());
    for (int64_t i = 0; i < index.numel(); ++i) {
      const int64_t at = index.getInt(i) < 0 ? index.getInt(i) + n : index.getInt(i);
      if (at < 0 || at >= n)
        c.fail(fmt::format("index {} is out of range for a shape of {} sizes", index.getInt(i), n));
      out.dims.push_back(v.dims[static_cast<size_t>(at)]);
    }
    c.setShapeOutput(0, out);
    return;
  }
  ir::Value* x = c.required(0);
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", 0), x->type.rank());
  c.setOutput(0, c.op(op, {x, c.required(1)}, oneAttr("dim", ir::Attribute::ofInt(axis))));
}

/// GatherND → gather_nd, the indices as i64.
void gatherNd(NodeContext& c) {
  ir::Value* x = c.required(0);
  ir::AttrMap attrs;
  if (const int64_t b = c.intAttr("batch_dims", 0); b != 0) attrs.set("batch_dims", ir::Attribute::ofInt(b));
  c.setOutput(0, c.op(OpId::GatherNd, {x, c.cast(c.required(1), ir::DType::I64)}, attrs));
}

/// ScatterND → scatter_nd, the indices as i64 (reduction from opset 16).
void scatterNd(NodeContext& c) {
  ir::AttrMap attrs;
  if (const std::string r = c.stringAttr("reduction", "none"); r != "none")
    attrs.set("reduction", ir::Attribute::ofString(r));
  c.setOutput(0, c.op(OpId::ScatterNd, {c.required(0), c.cast(c.required(1), ir::DType::I64), c.required(2)}, attrs));
}

/// ScatterElements (torch.scatter) → scatter_nd whose coordinates name each
/// update's destination: its index along `axis`, its own position along
/// every other dim.
void scatterElements(NodeContext& c) {
  ir::Value* data = c.required(0);
  ir::Value* indices = c.cast(c.required(1), ir::DType::I64);
  ir::Value* updates = c.required(2);
  const int64_t rank = data->type.rank();
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", 0), rank);
  if (indices->type.shape != updates->type.shape || indices->type.rank() != rank)
    c.fail(fmt::format("indices {} and updates {} must have one shape of the data's rank {}",
                       ir::toString(indices->type), ir::toString(updates->type), rank));
  std::vector<ir::Value*> columns;
  for (int64_t k = 0; k < rank; ++k) {
    ir::Value* column = indices;
    if (k != axis)
      column = ir::insertNode(c.region, c.region.nodes().size(), OpId::Iota, {},
                              oneAttr("dim", ir::Attribute::ofInt(k)), {{ir::DType::I64, indices->type.shape}}, c.loc)
                   ->result();
    columns.push_back(c.op(OpId::Unsqueeze, {column}, oneAttr("dim", ir::Attribute::ofInt(rank))));
  }
  ir::AttrMap attrs;
  if (const std::string r = c.stringAttr("reduction", "none"); r != "none")
    attrs.set("reduction", ir::Attribute::ofString(r));
  c.setOutput(0, c.op(OpId::ScatterNd, {data, concat(c, columns, rank), updates}, attrs));
}

/// Resize (opset 10: X, scales; from 11: X, roi, scales, sizes) → resize
/// to sizes. Nearest and linear; the output sizes from `sizes`, or from
/// `scales` where size · scale is whole (graphc maps coordinates with
/// out / in, which is the given scale only then).
void resizeOp(NodeContext& c) {
  ir::Value* x = c.required(0);
  const int64_t rank = x->type.rank();
  std::string mode = c.stringAttr("mode", "nearest");
  if (mode != "nearest" && mode != "linear")
    c.unsupported("mode " + mode, fmt::format("mode \"{}\" is not supported (nearest and linear are)", mode));
  if (c.intAttr("antialias", 0) != 0) c.unsupported("antialias", "antialiased resizing is not supported");
  if (c.stringAttr("keep_aspect_ratio_policy", "stretch") != "stretch")
    c.unsupported("keep_aspect_ratio_policy", "only keep_aspect_ratio_policy \"stretch\" is supported");
  const std::string coordinates =
      c.opset < 11 ? "asymmetric" : c.stringAttr("coordinate_transformation_mode", "half_pixel");
  if (coordinates != "asymmetric" && coordinates != "half_pixel" && coordinates != "pytorch_half_pixel" &&
      coordinates != "align_corners")
    c.unsupported("coordinate_transformation_mode " + coordinates,
                  fmt::format("coordinate_transformation_mode \"{}\" is not supported", coordinates));
  const std::string nearest = c.opset < 11 ? "floor" : c.stringAttr("nearest_mode", "round_prefer_floor");
  std::vector<int64_t> axes;
  if (auto a = c.intsAttr("axes"))
    for (int64_t axis : *a) axes.push_back(normalizeAxis(c, axis, rank));
  else
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  const size_t scalesInput = c.opset < 11 ? 1 : 2;
  ir::Shape out = x->type.shape;
  if (c.opset >= 11 && c.present(3)) {
    const ShapeValue sizes = c.shapeInput(3, "'sizes'");
    if (sizes.dims.size() != axes.size()) c.fail(fmt::format("{} sizes for {} axes", sizes.dims.size(), axes.size()));
    for (size_t k = 0; k < axes.size(); ++k) out[static_cast<size_t>(axes[k])] = sizes.dims[k];
  } else {
    const runtime::Tensor scales = c.requireConstant(scalesInput, "'scales'");
    if (static_cast<size_t>(scales.numel()) != axes.size())
      c.fail(fmt::format("{} scales for {} axes", scales.numel(), axes.size()));
    for (size_t k = 0; k < axes.size(); ++k) {
      const double scale = scales.getDouble(static_cast<int64_t>(k));
      ir::Dim& d = out[static_cast<size_t>(axes[k])];
      if (scale == 1) continue;
      if (!d.isStatic())
        c.unsupported("of a symbolic size",
                      fmt::format("scaling the symbolic size {} is not supported", ir::toString(d)));
      const double size = static_cast<double>(d.size) * scale;
      if (!(scale > 0) || size != std::floor(size) || size > static_cast<double>(kMaxImportTimeElements))
        c.unsupported("to a fractional size",
                      fmt::format("scale {} of size {} does not give a whole size", scale, d.size));
      d = ir::Dim::of(static_cast<int64_t>(size));
    }
  }
  ir::AttrMap attrs = oneAttr("size", ir::shapeAttribute(out));
  attrs.set("mode", ir::Attribute::ofString(mode));
  attrs.set("coordinates", ir::Attribute::ofString(coordinates));
  attrs.set("nearest", ir::Attribute::ofString(nearest));
  c.setOutput(0, out == x->type.shape ? x : c.op(OpId::Resize, {x}, attrs));
}

/// DepthToSpace (modes DCR and CRD) and SpaceToDepth: a reshape, a
/// permute and a reshape, all index maps.
template <bool toSpace>
void depthSpace(NodeContext& c) {
  ir::Value* x = c.required(0);
  if (x->type.rank() != 4) c.fail(fmt::format("the input must be [N, C, H, W], got {}", ir::toString(x->type)));
  const int64_t b = c.intAttr("blocksize", 0);
  if (b <= 0 || b > (1 << 20)) c.fail(fmt::format("'blocksize' {} is out of range", b));
  const ir::Dim n = x->type.shape[0];
  const int64_t ch = staticDim(c, x, 1, "DepthToSpace"), h = staticDim(c, x, 2, "DepthToSpace"),
                w = staticDim(c, x, 3, "DepthToSpace");
  auto s = [](std::initializer_list<int64_t> v) {
    ir::Shape out;
    for (int64_t d : v) out.push_back(ir::Dim::of(d));
    return out;
  };
  ir::Shape split, result;
  std::vector<int64_t> perm;
  if (toSpace) {
    if (ch % (b * b) != 0) c.fail(fmt::format("channels {} are not a multiple of blocksize² {}", ch, b * b));
    if (c.stringAttr("mode", "DCR") == "DCR") {
      split = s({b, b, ch / (b * b), h, w});
      perm = {0, 3, 4, 1, 5, 2};
    } else {
      split = s({ch / (b * b), b, b, h, w});
      perm = {0, 1, 4, 2, 5, 3};
    }
    result = s({ch / (b * b), checkedMul(c, h, b), checkedMul(c, w, b)});
  } else {
    if (h % b != 0 || w % b != 0) c.fail(fmt::format("{}x{} is not a multiple of blocksize {}", h, w, b));
    split = s({ch, h / b, b, w / b, b});
    perm = {0, 3, 5, 1, 2, 4};
    result = s({checkedMul(c, ch, b * b), h / b, w / b});
  }
  split.insert(split.begin(), n);
  result.insert(result.begin(), n);
  ir::Value* y = c.op(OpId::Permute, {reshape(c, x, split)}, oneAttr("dims", ir::Attribute::ofInts(perm)));
  c.setOutput(0, reshape(c, y, result));
}

/// OneHot: where(index == iota, on, off), the iota along `axis`.
void oneHot(NodeContext& c) {
  ir::Value* indices = c.required(0);
  const runtime::Tensor depthValue = c.requireConstant(1, "'depth'");
  if (depthValue.numel() != 1) c.fail("'depth' must hold one value");
  const double depthAsDouble = depthValue.getDouble(0);
  if (!(depthAsDouble >= 1 && depthAsDouble <= static_cast<double>(kMaxImportTimeElements)))
    c.fail(fmt::format("'depth' must be in [1, {}], got {}", kMaxImportTimeElements, depthAsDouble));
  const int64_t depth = static_cast<int64_t>(depthAsDouble);
  ir::Value* values = c.required(2);
  if (values->type.rank() != 1 || !values->type.shape[0].isStatic(2)) c.fail("'values' must be [off, on]");
  const int64_t rank = indices->type.rank() + 1;
  const int64_t axis = normalizeAxis(c, c.intAttr("axis", -1), rank);
  ir::Value* index = c.cast(indices, ir::DType::I64);
  ir::Value* negative = c.op(OpId::Lt, {index, c.scalar(ir::DType::I64, 0)});
  index = c.op(OpId::Where,
               {negative, c.op(OpId::Add, {index, c.scalar(ir::DType::I64, static_cast<double>(depth))}), index});
  index = c.op(OpId::Unsqueeze, {index}, oneAttr("dim", ir::Attribute::ofInt(axis)));
  std::vector<int64_t> iotaShape(static_cast<size_t>(rank - axis), 1);
  iotaShape[0] = depth;
  runtime::Tensor iota(ir::DType::I64, iotaShape);
  for (int64_t i = 0; i < depth; ++i) iota.setInt(i, i);
  ir::Value* hot = c.op(OpId::Eq, {index, c.constantOf(iota)});
  auto element = [&](int64_t k) {
    return c.op(OpId::Reshape, {slice(c, values, 0, k, k + 1)}, oneAttr("shape", ir::Attribute::ofList({})));
  };
  c.setOutput(0, c.op(OpId::Where, {hot, element(1), element(0)}));
}

/// Trilu: the kept triangle of the last two dims as a constant mask.
void trilu(NodeContext& c) {
  ir::Value* x = c.required(0);
  const int64_t rank = x->type.rank();
  if (rank < 2) c.fail(fmt::format("the input must have rank 2 or more, it is {}", ir::toString(x->type)));
  const int64_t k = c.present(1) ? c.constantInts(1, "'k'").at(0) : 0;
  const bool upper = c.intAttr("upper", 1) != 0;
  const int64_t rows = staticDim(c, x, rank - 2, "Trilu"), cols = staticDim(c, x, rank - 1, "Trilu");
  checkImportTimeSize(c, rows, cols);
  runtime::Tensor mask(ir::DType::Bool, {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask.setInt(i * cols + j, upper ? j - i >= k : j - i <= k);
  ir::Value* zero = x->type.dtype == ir::DType::Bool ? c.scalar(ir::DType::Bool, 0) : c.scalarLike(x, 0);
  c.setOutput(0, c.op(OpId::Where, {c.constantOf(mask), x, zero}));
}

const OpMapping kOps[] = {
    {"Identity", identity, {}},
    {"Constant",
     constant,
     {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings",
      "sparse_value"}},
    {"Shape", shape, {"start", "end"}},
    {"Size", size, {}},
    {"ConstantOfShape", constantOfShape, {"value"}},
    {"Range", range, {}},
    {"EyeLike", eyeLike, {"dtype", "k"}},
    {"Reshape", reshapeOp, {"allowzero"}},
    {"Flatten", flatten, {"axis"}},
    {"Transpose", transpose, {"perm"}},
    {"Squeeze", squeeze, {"axes"}},
    {"Unsqueeze", unsqueeze, {"axes"}},
    {"Expand", expandOp, {}},
    {"Concat", concatOp, {"axis"}},
    {"Split", split, {"axis", "split", "num_outputs"}},
    {"Slice", sliceOp, {"starts", "ends", "axes"}},
    {"Tile", tile, {}},
    {"Pad", pad, {"mode", "pads", "value"}},
    {"Trilu", trilu, {"upper"}},
    {"DepthToSpace", depthSpace<true>, {"blocksize", "mode"}},
    {"SpaceToDepth", depthSpace<false>, {"blocksize"}},
    {"OneHot", oneHot, {"axis"}},
    {"Gather", gatherOp<OpId::IndexSelect>, {"axis"}},
    {"GatherElements", gatherOp<OpId::Gather>, {"axis"}},
    {"GatherND", gatherNd, {"batch_dims"}},
    {"ScatterND", scatterNd, {"reduction"}},
    {"ScatterElements", scatterElements, {"axis", "reduction"}},
    {"Scatter", scatterElements, {"axis"}},  // opset 9-10: ScatterElements by its old name
    {"Resize",
     resizeOp,
     {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
      "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"}},
};

}  // namespace

std::span<const OpMapping> shapeOps() { return kOps; }

}  // namespace graphc::frontend::onnximport
