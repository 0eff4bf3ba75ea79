// The tracer's state is one trace at a time per thread: the module being
// built and a stack of the regions ops go into (the graph's body, then the
// branch of each cond being traced). A TracedTensor names its trace, so a
// value kept past its trace() is caught before it is touched.
#include "frontend/api/Tracer.h"

#include <atomic>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "ir/Builder.h"
#include "ir/Verifier.h"
#include "runtime/FileIO.h"
#include "runtime/reference/Constants.h"

namespace graphc {

struct TraceAccess {
  static uint64_t trace(const TracedTensor& t) { return t.trace_; }
  static TracedTensor make(ir::Value* v, uint64_t trace) { return TracedTensor(v, trace); }
};

ir::TensorType TensorSpec::type() const {
  ir::TensorType t{dtype, {}};
  for (const Size& s : shape) t.shape.push_back(s.dim);
  return t;
}

namespace {

/// A cond whose branches are being traced: the node, not yet in its parent
/// region; its operands after the predicate are what the branches'
/// parameters stand for, and grow as the branches lift outer values.
struct CondScope {
  ir::Node* node;
};

struct Frame {
  ir::Region* region;
  CondScope* cond;  // null for the graph's body
};

struct TraceState {
  uint64_t id = 0;
  ir::Graph* graph = nullptr;
  std::vector<Frame> frames;
  std::map<std::string, std::shared_ptr<const ir::SourceBuffer>> files;
};

thread_local TraceState* current = nullptr;
std::atomic<uint64_t> nextTraceId{1};

TraceState& state() {
  if (!current) throw Error("a graphc::TracedTensor was used outside graphc::trace()");
  return *current;
}

/// A location in the caller's C++ source; the file is read once per trace
/// so that diagnostics can show the line.
ir::SourceLoc locate(const std::source_location& loc) {
  TraceState& s = state();
  std::string file = loc.file_name();
  auto it = s.files.find(file);
  if (it == s.files.end()) {
    auto buffer = std::make_shared<ir::SourceBuffer>();
    buffer->name = file;
    try {  // the caller's source file, for the caret line; without it the location still stands
      buffer->text = runtime::readFile(file);
    } catch (const ir::Error&) {
    }
    it = s.files.emplace(file, std::move(buffer)).first;
  }
  return ir::SourceLoc{it->second, static_cast<int>(loc.line()), static_cast<int>(loc.column())};
}

[[noreturn]] void traceError(const ir::SourceLoc& loc, std::string message) {
  throw CompileError({ir::Diagnostic{ir::Severity::Error, loc, std::move(message), {}}});
}

/// Passes `outer` (a value of frame k-1's region) into frame k's cond as a
/// new operand, with a parameter in both branches; returns the parameter
/// of frame k's region.
ir::Value* liftInto(TraceState& s, size_t k, ir::Value* outer) {
  ir::Node* node = s.frames[k].cond->node;
  size_t index = 0;
  for (size_t i = 1; i < node->operands.size(); ++i)
    if (node->operands[i] == outer) index = i;
  if (index == 0) {
    node->operands.push_back(outer);
    index = node->operands.size() - 1;
    for (const auto& r : node->regions()) r->addParam(outer->type, outer->name);
  }
  return s.frames[k].region->param(index - 1);
}

/// `t` as a value of the region now being traced.
ir::Value* use(const TracedTensor& t, const ir::SourceLoc& loc) {
  TraceState& s = state();
  if (!t.value() || TraceAccess::trace(t) != s.id)
    traceError(loc, t.value() ? "this TracedTensor belongs to another trace() call"
                              : "this TracedTensor holds no value (default-constructed)");
  ir::Value* v = t.value();
  size_t home = s.frames.size();
  for (size_t k = s.frames.size(); k-- > 0;)
    if (s.frames[k].region == v->parentRegion()) {
      home = k;
      break;
    }
  if (home == s.frames.size())
    traceError(loc, "this value was traced inside a cond branch and cannot be used outside it");
  for (size_t k = home + 1; k < s.frames.size(); ++k) v = liftInto(s, k, v);
  return v;
}

TracedTensor wrap(ir::Value* v) { return TraceAccess::make(v, state().id); }

/// Appends one node to the current region, with types from its rule.
std::vector<TracedTensor> emit(ir::OpId op, const std::vector<TracedTensor>& operands, ir::AttrMap attrs,
                               const std::source_location& where,
                               const std::vector<ir::TensorType>* declared = nullptr) {
  TraceState& s = state();
  ir::SourceLoc loc = locate(where);
  std::vector<ir::Value*> values;
  for (const TracedTensor& t : operands) values.push_back(use(t, loc));
  auto node = std::make_unique<ir::Node>(op, std::move(values), std::move(attrs), loc);
  ir::TypeRuleResult types = ir::inferTypes(*node, declared);
  if (!types.ok()) traceError(loc, types.error);
  ir::Node* n = s.frames.back().region->append(std::move(node));
  std::vector<TracedTensor> results;
  for (const ir::TensorType& t : types.types) results.push_back(wrap(n->addResult(t, {}, loc)));
  return results;
}

TracedTensor emit1(ir::OpId op, const std::vector<TracedTensor>& operands, const std::source_location& where,
                   ir::AttrMap attrs = {}) {
  return emit(op, operands, std::move(attrs), where).front();
}

ir::Attribute dimsAttribute(const std::vector<Size>& shape) {
  ir::Shape dims;
  for (const Size& s : shape) dims.push_back(s.dim);
  return ir::shapeAttribute(dims);
}

ir::AttrMap reduceAttrs(const std::vector<int64_t>& dims, bool keepdim) {
  ir::AttrMap a;
  if (!dims.empty()) a.set("dims", ir::Attribute::ofInts(dims));
  if (keepdim) a.set("keepdim", ir::Attribute::ofBool(true));
  return a;
}

/// Traces `fn` into `region`, passing it the region's first `arity`
/// parameters (those after are values lifted by the other branch).
TracedList traceRegion(TraceState& s, ir::Region& region, CondScope* scope, size_t arity, const BranchFn& fn,
                       const std::source_location& where) {
  s.frames.push_back(Frame{&region, scope});
  TracedList args;
  for (size_t k = 0; k < arity; ++k) args.push_back(wrap(region.param(k)));
  TracedList results = fn(args);
  ir::SourceLoc loc = locate(where);
  for (const TracedTensor& r : results) region.returns.push_back(use(r, loc));
  region.returnLoc = loc;
  s.frames.pop_back();
  return results;
}

}  // namespace

const ir::TensorType& TracedTensor::type() const {
  if (!value_) throw Error("this TracedTensor holds no value (default-constructed)");
  if (!current || current->id != trace_) throw Error("a graphc::TracedTensor was used outside its trace() call");
  return value_->type;
}

// --- ops -------------------------------------------------------------------

#define GRAPHC_UNARY(fn, id) \
  TracedTensor fn(TracedTensor x, SourceLocation loc) { return emit1(ir::OpId::id, {x}, loc); }
GRAPHC_UNARY(neg, Neg)
GRAPHC_UNARY(abs, Abs)
GRAPHC_UNARY(exp, Exp)
GRAPHC_UNARY(log, Log)
GRAPHC_UNARY(sqrt, Sqrt)
GRAPHC_UNARY(rsqrt, Rsqrt)
GRAPHC_UNARY(sin, Sin)
GRAPHC_UNARY(cos, Cos)
GRAPHC_UNARY(tanh, Tanh)
GRAPHC_UNARY(sigmoid, Sigmoid)
GRAPHC_UNARY(relu, Relu)
GRAPHC_UNARY(silu, Silu)
GRAPHC_UNARY(erf, Erf)
GRAPHC_UNARY(reciprocal, Reciprocal)
GRAPHC_UNARY(floor, Floor)
GRAPHC_UNARY(ceil, Ceil)
GRAPHC_UNARY(round, Round)
GRAPHC_UNARY(trunc, Trunc)
GRAPHC_UNARY(tan, Tan)
GRAPHC_UNARY(asin, Asin)
GRAPHC_UNARY(acos, Acos)
GRAPHC_UNARY(atan, Atan)
GRAPHC_UNARY(sinh, Sinh)
GRAPHC_UNARY(cosh, Cosh)
GRAPHC_UNARY(asinh, Asinh)
GRAPHC_UNARY(acosh, Acosh)
GRAPHC_UNARY(atanh, Atanh)
GRAPHC_UNARY(expm1, Expm1)
GRAPHC_UNARY(log1p, Log1p)
GRAPHC_UNARY(log2, Log2)
GRAPHC_UNARY(log10, Log10)
GRAPHC_UNARY(sign, Sign)
GRAPHC_UNARY(logical_not, LogicalNot)
#undef GRAPHC_UNARY

#define GRAPHC_BINARY(fn, id) \
  TracedTensor fn(TracedTensor a, TracedTensor b, SourceLocation loc) { return emit1(ir::OpId::id, {a, b}, loc); }
GRAPHC_BINARY(add, Add)
GRAPHC_BINARY(sub, Sub)
GRAPHC_BINARY(mul, Mul)
GRAPHC_BINARY(div, Div)
GRAPHC_BINARY(pow, Pow)
GRAPHC_BINARY(maximum, Maximum)
GRAPHC_BINARY(minimum, Minimum)
GRAPHC_BINARY(atan2, Atan2)
GRAPHC_BINARY(fmod, Fmod)
GRAPHC_BINARY(remainder, Remainder)
GRAPHC_BINARY(floor_divide, FloorDivide)
GRAPHC_BINARY(eq, Eq)
GRAPHC_BINARY(ne, Ne)
GRAPHC_BINARY(lt, Lt)
GRAPHC_BINARY(le, Le)
GRAPHC_BINARY(gt, Gt)
GRAPHC_BINARY(ge, Ge)
GRAPHC_BINARY(logical_and, LogicalAnd)
GRAPHC_BINARY(logical_or, LogicalOr)
#undef GRAPHC_BINARY

TracedTensor gelu(TracedTensor x, std::string approximate, SourceLocation loc) {
  ir::AttrMap a;
  if (approximate != "none") a.set("approximate", ir::Attribute::ofString(std::move(approximate)));
  return emit1(ir::OpId::Gelu, {x}, loc, std::move(a));
}

TracedTensor cast(TracedTensor x, DType dtype, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dtype", ir::Attribute::ofDType(dtype));
  return emit1(ir::OpId::Cast, {x}, loc, std::move(a));
}

TracedTensor where(TracedTensor condition, TracedTensor a, TracedTensor b, SourceLocation loc) {
  return emit1(ir::OpId::Where, {condition, a, b}, loc);
}

TracedTensor clamp(TracedTensor x, std::optional<double> min, std::optional<double> max, SourceLocation loc) {
  ir::AttrMap a;
  if (min) a.set("min", ir::Attribute::ofFloat(*min));
  if (max) a.set("max", ir::Attribute::ofFloat(*max));
  return emit1(ir::OpId::Clamp, {x}, loc, std::move(a));
}

TracedTensor scalar(double value, DType dtype, SourceLocation loc) { return full(value, dtype, {}, loc); }

namespace {
TracedTensor scalarLike(double value, const TracedTensor& like) {
  return scalar(value, like.dtype(), std::source_location::current());
}
}  // namespace

TracedTensor operator+(TracedTensor a, TracedTensor b) { return add(a, b); }
TracedTensor operator-(TracedTensor a, TracedTensor b) { return sub(a, b); }
TracedTensor operator*(TracedTensor a, TracedTensor b) { return mul(a, b); }
TracedTensor operator/(TracedTensor a, TracedTensor b) { return div(a, b); }
TracedTensor operator-(TracedTensor a) { return neg(a); }
TracedTensor operator<(TracedTensor a, TracedTensor b) { return lt(a, b); }
TracedTensor operator<=(TracedTensor a, TracedTensor b) { return le(a, b); }
TracedTensor operator>(TracedTensor a, TracedTensor b) { return gt(a, b); }
TracedTensor operator>=(TracedTensor a, TracedTensor b) { return ge(a, b); }
TracedTensor operator==(TracedTensor a, TracedTensor b) { return eq(a, b); }
TracedTensor operator!=(TracedTensor a, TracedTensor b) { return ne(a, b); }
TracedTensor operator&(TracedTensor a, TracedTensor b) { return logical_and(a, b); }
TracedTensor operator|(TracedTensor a, TracedTensor b) { return logical_or(a, b); }
TracedTensor operator~(TracedTensor a) { return logical_not(a); }
TracedTensor operator+(TracedTensor a, double b) { return add(a, scalarLike(b, a)); }
TracedTensor operator+(double a, TracedTensor b) { return add(scalarLike(a, b), b); }
TracedTensor operator-(TracedTensor a, double b) { return sub(a, scalarLike(b, a)); }
TracedTensor operator-(double a, TracedTensor b) { return sub(scalarLike(a, b), b); }
TracedTensor operator*(TracedTensor a, double b) { return mul(a, scalarLike(b, a)); }
TracedTensor operator*(double a, TracedTensor b) { return mul(scalarLike(a, b), b); }
TracedTensor operator/(TracedTensor a, double b) { return div(a, scalarLike(b, a)); }
TracedTensor operator/(double a, TracedTensor b) { return div(scalarLike(a, b), b); }
TracedTensor operator<(TracedTensor a, double b) { return lt(a, scalarLike(b, a)); }
TracedTensor operator>(TracedTensor a, double b) { return gt(a, scalarLike(b, a)); }

#define GRAPHC_REDUCE(fn, id)                                                                    \
  TracedTensor fn(TracedTensor x, std::vector<int64_t> dims, bool keepdim, SourceLocation loc) { \
    return emit1(ir::OpId::id, {x}, loc, reduceAttrs(dims, keepdim));                            \
  }
GRAPHC_REDUCE(sum, Sum)
GRAPHC_REDUCE(mean, Mean)
GRAPHC_REDUCE(amax, Amax)
GRAPHC_REDUCE(amin, Amin)
GRAPHC_REDUCE(prod, Prod)
#undef GRAPHC_REDUCE

namespace {
TracedTensor argExtremum(ir::OpId op, TracedTensor x, int64_t dim, bool keepdim, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  a.set("keepdim", ir::Attribute::ofBool(keepdim));
  return emit1(op, {x}, loc, std::move(a));
}
}  // namespace

TracedTensor argmax(TracedTensor x, int64_t dim, bool keepdim, SourceLocation loc) {
  return argExtremum(ir::OpId::Argmax, x, dim, keepdim, loc);
}
TracedTensor argmin(TracedTensor x, int64_t dim, bool keepdim, SourceLocation loc) {
  return argExtremum(ir::OpId::Argmin, x, dim, keepdim, loc);
}

TracedTensor cumsum(TracedTensor x, int64_t dim, bool exclusive, bool reverse, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  a.set("exclusive", ir::Attribute::ofBool(exclusive));
  a.set("reverse", ir::Attribute::ofBool(reverse));
  return emit1(ir::OpId::Cumsum, {x}, loc, std::move(a));
}

TracedTensor softmax(TracedTensor x, int64_t dim, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  return emit1(ir::OpId::Softmax, {x}, loc, std::move(a));
}

TracedTensor log_softmax(TracedTensor x, int64_t dim, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  return emit1(ir::OpId::LogSoftmax, {x}, loc, std::move(a));
}

TracedTensor layer_norm(TracedTensor x, TracedTensor weight, std::optional<TracedTensor> bias, double eps,
                        SourceLocation loc) {
  ir::AttrMap a;
  a.set("eps", ir::Attribute::ofFloat(eps));
  TracedList operands{x, weight};
  if (bias) operands.push_back(*bias);
  return emit1(ir::OpId::LayerNorm, operands, loc, std::move(a));
}

TracedTensor batch_norm(TracedTensor x, TracedTensor mean, TracedTensor var, TracedTensor weight, TracedTensor bias,
                        double eps, SourceLocation loc) {
  ir::AttrMap a;
  a.set("eps", ir::Attribute::ofFloat(eps));
  return emit1(ir::OpId::BatchNorm, {x, mean, var, weight, bias}, loc, std::move(a));
}

TracedTensor group_norm(TracedTensor x, TracedTensor weight, TracedTensor bias, int64_t groups, double eps,
                        SourceLocation loc) {
  ir::AttrMap a;
  a.set("groups", ir::Attribute::ofInt(groups));
  a.set("eps", ir::Attribute::ofFloat(eps));
  return emit1(ir::OpId::GroupNorm, {x, weight, bias}, loc, std::move(a));
}

namespace {
/// The attributes a window op reads, those left empty omitted (defaults).
ir::AttrMap windowAttrs(ir::OpId op, const WindowOptions& o) {
  ir::AttrMap a;
  auto ints = [&](const char* name, const std::vector<int64_t>& v) {
    if (!v.empty()) a.set(name, ir::Attribute::ofInts(v));
  };
  ints("stride", o.stride);
  ints("padding", o.padding);
  if (op != ir::OpId::AvgPool) ints("dilation", o.dilation);
  if (op == ir::OpId::Conv || op == ir::OpId::ConvTranspose) {
    if (o.groups != 1) a.set("groups", ir::Attribute::ofInt(o.groups));
  } else {
    if (o.ceilMode) a.set("ceil_mode", ir::Attribute::ofBool(true));
  }
  if (op == ir::OpId::ConvTranspose) ints("output_padding", o.outputPadding);
  if (op == ir::OpId::AvgPool && o.countIncludePad) a.set("count_include_pad", ir::Attribute::ofBool(true));
  return a;
}

TracedTensor convolution(ir::OpId op, TracedTensor x, TracedTensor w, std::optional<TracedTensor> b,
                         const WindowOptions& options, SourceLocation loc) {
  TracedList operands{x, w};
  if (b) operands.push_back(*b);
  return emit1(op, operands, loc, windowAttrs(op, options));
}

TracedTensor pool(ir::OpId op, TracedTensor x, std::vector<int64_t> kernel, const WindowOptions& options,
                  SourceLocation loc) {
  ir::AttrMap a = windowAttrs(op, options);
  a.set("kernel", ir::Attribute::ofInts(kernel));
  return emit1(op, {x}, loc, std::move(a));
}
}  // namespace

TracedTensor conv(TracedTensor x, TracedTensor w, std::optional<TracedTensor> b, const WindowOptions& options,
                  SourceLocation loc) {
  return convolution(ir::OpId::Conv, x, w, b, options, loc);
}
TracedTensor conv_transpose(TracedTensor x, TracedTensor w, std::optional<TracedTensor> b, const WindowOptions& options,
                            SourceLocation loc) {
  return convolution(ir::OpId::ConvTranspose, x, w, b, options, loc);
}
TracedTensor max_pool(TracedTensor x, std::vector<int64_t> kernel, const WindowOptions& options, SourceLocation loc) {
  return pool(ir::OpId::MaxPool, x, std::move(kernel), options, loc);
}
TracedTensor avg_pool(TracedTensor x, std::vector<int64_t> kernel, const WindowOptions& options, SourceLocation loc) {
  return pool(ir::OpId::AvgPool, x, std::move(kernel), options, loc);
}

TracedTensor matmul(TracedTensor a, TracedTensor b, SourceLocation loc) { return emit1(ir::OpId::Matmul, {a, b}, loc); }

TracedTensor linear(TracedTensor x, TracedTensor w, std::optional<TracedTensor> b, SourceLocation loc) {
  TracedList operands{x, w};
  if (b) operands.push_back(*b);
  return emit1(ir::OpId::Linear, operands, loc);
}

std::pair<TracedTensor, TracedTensor> eigh(TracedTensor a, std::string uplo, SourceLocation loc) {
  ir::AttrMap attrs;
  if (uplo != "L") attrs.set("uplo", ir::Attribute::ofString(std::move(uplo)));
  TracedList r = emit(ir::OpId::Eigh, {a}, std::move(attrs), loc);
  return {r[0], r[1]};
}

TracedTensor reshape(TracedTensor x, std::vector<Size> shape, SourceLocation loc) {
  ir::AttrMap a;
  a.set("shape", dimsAttribute(shape));
  return emit1(ir::OpId::Reshape, {x}, loc, std::move(a));
}

TracedTensor permute(TracedTensor x, std::vector<int64_t> dims, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dims", ir::Attribute::ofInts(dims));
  return emit1(ir::OpId::Permute, {x}, loc, std::move(a));
}

TracedTensor transpose(TracedTensor x, int64_t dim0, int64_t dim1, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim0", ir::Attribute::ofInt(dim0));
  a.set("dim1", ir::Attribute::ofInt(dim1));
  return emit1(ir::OpId::Transpose, {x}, loc, std::move(a));
}

TracedTensor expand(TracedTensor x, std::vector<Size> shape, SourceLocation loc) {
  ir::AttrMap a;
  a.set("shape", dimsAttribute(shape));
  return emit1(ir::OpId::Expand, {x}, loc, std::move(a));
}

TracedTensor slice(TracedTensor x, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step,
                   SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  if (start) a.set("start", ir::Attribute::ofInt(*start));
  if (end) a.set("end", ir::Attribute::ofInt(*end));
  if (step != 1) a.set("step", ir::Attribute::ofInt(step));
  return emit1(ir::OpId::Slice, {x}, loc, std::move(a));
}

TracedTensor concat(std::vector<TracedTensor> xs, int64_t dim, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  return emit1(ir::OpId::Concat, xs, loc, std::move(a));
}

TracedTensor index_select(TracedTensor x, int64_t dim, TracedTensor index, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  return emit1(ir::OpId::IndexSelect, {x, index}, loc, std::move(a));
}

TracedTensor gather(TracedTensor x, int64_t dim, TracedTensor index, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  return emit1(ir::OpId::Gather, {x, index}, loc, std::move(a));
}

TracedTensor gather_nd(TracedTensor x, TracedTensor index, int64_t batchDims, SourceLocation loc) {
  ir::AttrMap a;
  if (batchDims != 0) a.set("batch_dims", ir::Attribute::ofInt(batchDims));
  return emit1(ir::OpId::GatherNd, {x, index}, loc, std::move(a));
}

TracedTensor scatter_nd(TracedTensor x, TracedTensor index, TracedTensor updates, std::string reduction,
                        SourceLocation loc) {
  ir::AttrMap a;
  if (reduction != "none") a.set("reduction", ir::Attribute::ofString(std::move(reduction)));
  return emit1(ir::OpId::ScatterNd, {x, index, updates}, loc, std::move(a));
}

TracedTensor resize(TracedTensor x, std::vector<Size> size, std::string mode, std::string coordinates,
                    SourceLocation loc) {
  ir::AttrMap a;
  a.set("size", dimsAttribute(size));
  a.set("mode", ir::Attribute::ofString(std::move(mode)));
  a.set("coordinates", ir::Attribute::ofString(std::move(coordinates)));
  return emit1(ir::OpId::Resize, {x}, loc, std::move(a));
}

TracedTensor squeeze(TracedTensor x, std::optional<int64_t> dim, SourceLocation loc) {
  ir::AttrMap a;
  if (dim) a.set("dim", ir::Attribute::ofInt(*dim));
  return emit1(ir::OpId::Squeeze, {x}, loc, std::move(a));
}

TracedTensor unsqueeze(TracedTensor x, int64_t dim, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  return emit1(ir::OpId::Unsqueeze, {x}, loc, std::move(a));
}

TracedTensor constant(const Tensor& value, SourceLocation loc) {
  ir::AttrMap a;
  // Small values as numbers; weights as dense bytes of a copy, so the
  // caller's tensor stays theirs to change.
  if (value.numel() <= 16) {
    a.set("value", runtime::tensorAttribute(value));
  } else {
    runtime::Tensor copy(value.dtype(), value.shape());
    std::memcpy(copy.data(), value.data(), value.nbytes());
    a.set("value", runtime::denseAttribute(copy));
  }
  std::vector<ir::TensorType> declared{value.type()};
  return emit(ir::OpId::Constant, {}, std::move(a), loc, &declared).front();
}

TracedTensor iota(DType dtype, std::vector<Size> shape, int64_t dim, double start, double step, SourceLocation loc) {
  ir::AttrMap a;
  a.set("dim", ir::Attribute::ofInt(dim));
  a.set("start", ir::scalarAttribute(dtype, start));
  a.set("step", ir::scalarAttribute(dtype, step));
  std::vector<ir::TensorType> declared{TensorSpec{dtype, std::move(shape), {}}.type()};
  return emit(ir::OpId::Iota, {}, std::move(a), loc, &declared).front();
}

TracedTensor full(double value, DType dtype, std::vector<Size> shape, SourceLocation loc) {
  ir::AttrMap a;
  if (ir::isFloat(dtype))
    a.set("value", ir::Attribute::ofFloat(value));
  else if (dtype == DType::Bool)
    a.set("value", ir::Attribute::ofBool(value != 0));
  else
    a.set("value", ir::Attribute::ofInt(static_cast<int64_t>(value)));
  std::vector<ir::TensorType> declared{TensorSpec{dtype, std::move(shape), {}}.type()};
  return emit(ir::OpId::Full, {}, std::move(a), loc, &declared).front();
}

TracedList cond(TracedTensor pred, const BranchFn& thenFn, const BranchFn& elseFn, const TracedList& operands,
                SourceLocation where) {
  TraceState& s = state();
  ir::SourceLoc loc = locate(where);
  if (!thenFn || !elseFn) traceError(loc, "cond needs a callable for each branch");
  std::vector<ir::Value*> values{use(pred, loc)};
  for (const TracedTensor& t : operands) values.push_back(use(t, loc));
  auto node = std::make_unique<ir::Node>(ir::OpId::Cond, values, ir::AttrMap{}, loc);
  for (const char* label : {"then", "else"}) {
    ir::Region& r = node->addRegion(label);
    for (size_t k = 1; k < values.size(); ++k) r.addParam(values[k]->type, values[k]->name, loc);
  }
  CondScope scope{node.get()};
  traceRegion(s, *node->regions()[0], &scope, operands.size(), thenFn, where);
  traceRegion(s, *node->regions()[1], &scope, operands.size(), elseFn, where);
  ir::TypeRuleResult types = ir::inferTypes(*node, nullptr);
  if (!types.ok()) traceError(loc, types.error);
  ir::Node* n = s.frames.back().region->append(std::move(node));
  TracedList results;
  for (const ir::TensorType& t : types.types) results.push_back(wrap(n->addResult(t, {}, loc)));
  return results;
}

// --- trace -----------------------------------------------------------------

Graph detail::traceList(const BranchFn& fn, const std::vector<TensorSpec>& inputs, const std::string& name) {
  if (current) throw Error("graphc::trace() was called inside another trace()");
  auto module = std::make_unique<ir::Module>();
  module->graphs.push_back(std::make_unique<ir::Graph>(name));
  ir::Graph& g = *module->graphs.back();
  for (size_t k = 0; k < inputs.size(); ++k)
    g.body.addParam(inputs[k].type(), inputs[k].name.empty() ? fmt::format("arg{}", k) : inputs[k].name);

  TraceState s;
  s.id = nextTraceId++;
  s.graph = &g;
  current = &s;
  struct Reset {
    ~Reset() { current = nullptr; }
  } reset;
  TracedList results = traceRegion(s, g.body, nullptr, inputs.size(), fn, std::source_location::current());
  if (results.empty()) throw Error(fmt::format("graphc::trace: the function traced as @{} returned nothing", name));
  g.resultTypes = g.body.returnTypes();

  ir::DiagnosticEngine diags;
  if (!ir::verify(*module, diags)) throw CompileError(diags.all());
  return Graph(std::move(module));
}

}  // namespace graphc
