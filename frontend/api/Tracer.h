// The tracing frontend, TorchDynamo's job done the C++ way: a function
// written over TracedTensor (operators and one function per op of the
// .graph language) is called once on symbolic inputs, and every op it
// applies becomes a node of an ir::Graph.
//
//   graphc::Graph g = graphc::trace(
//       [](graphc::TracedTensor x, graphc::TracedTensor w, graphc::TracedTensor b) {
//         return graphc::relu(graphc::linear(x, w, b));
//       },
//       {{graphc::DType::F32, {"B", 16}, "x"}, {graphc::DType::F32, {32, 16}, "w"},
//        {graphc::DType::F32, {32}, "b"}});
//
// Each op is type-checked as it is traced; a rule it breaks throws
// CompileError located at the calling line of the C++ source (as the
// parser locates errors in a .graph file). `cond` takes C++ callables for
// its branches and traces both; a branch may use any value of an enclosing
// scope: it is passed to the branches as an extra operand, so the graph's
// regions stay isolated (as torch.cond lifts free variables).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "frontend/api/Api.h"

namespace graphc {

/// One size: static (16) or symbolic ("B"); -1 where reshape/expand allow it.
struct Size {
  Size(int64_t n) : dim(ir::Dim::of(n)) {}
  Size(int n) : dim(ir::Dim::of(n)) {}
  Size(const char* symbol) : dim(ir::Dim::sym(symbol)) {}
  Size(std::string symbol) : dim(ir::Dim::sym(std::move(symbol))) {}
  ir::Dim dim;
};

/// A traced input: dtype, shape (static and symbolic sizes), name.
struct TensorSpec {
  DType dtype = DType::F32;
  std::vector<Size> shape;
  std::string name;
  ir::TensorType type() const;
};

/// A value of the graph being traced. Only valid inside the trace() call
/// that made it; using it elsewhere throws Error.
class TracedTensor {
 public:
  TracedTensor() = default;
  const ir::TensorType& type() const;
  DType dtype() const { return type().dtype; }
  int64_t rank() const { return type().rank(); }
  ir::Value* value() const { return value_; }

 private:
  friend struct TraceAccess;
  TracedTensor(ir::Value* v, uint64_t trace) : value_(v), trace_(trace) {}
  ir::Value* value_ = nullptr;
  uint64_t trace_ = 0;  // which trace() made it
};

using TracedList = std::vector<TracedTensor>;
using SourceLocation = std::source_location;
#define GRAPHC_HERE SourceLocation loc = SourceLocation::current()

// --- pointwise -------------------------------------------------------------
TracedTensor neg(TracedTensor x, GRAPHC_HERE);
TracedTensor abs(TracedTensor x, GRAPHC_HERE);
TracedTensor exp(TracedTensor x, GRAPHC_HERE);
TracedTensor log(TracedTensor x, GRAPHC_HERE);
TracedTensor sqrt(TracedTensor x, GRAPHC_HERE);
TracedTensor rsqrt(TracedTensor x, GRAPHC_HERE);
TracedTensor sin(TracedTensor x, GRAPHC_HERE);
TracedTensor cos(TracedTensor x, GRAPHC_HERE);
TracedTensor tanh(TracedTensor x, GRAPHC_HERE);
TracedTensor sigmoid(TracedTensor x, GRAPHC_HERE);
TracedTensor relu(TracedTensor x, GRAPHC_HERE);
/// approximate: "none" or "tanh", as torch.nn.functional.gelu.
TracedTensor gelu(TracedTensor x, std::string approximate = "none", GRAPHC_HERE);
TracedTensor silu(TracedTensor x, GRAPHC_HERE);
TracedTensor erf(TracedTensor x, GRAPHC_HERE);
TracedTensor reciprocal(TracedTensor x, GRAPHC_HERE);
TracedTensor floor(TracedTensor x, GRAPHC_HERE);
TracedTensor ceil(TracedTensor x, GRAPHC_HERE);
/// Half to even, as torch.round.
TracedTensor round(TracedTensor x, GRAPHC_HERE);
TracedTensor trunc(TracedTensor x, GRAPHC_HERE);
TracedTensor tan(TracedTensor x, GRAPHC_HERE);
TracedTensor asin(TracedTensor x, GRAPHC_HERE);
TracedTensor acos(TracedTensor x, GRAPHC_HERE);
TracedTensor atan(TracedTensor x, GRAPHC_HERE);
TracedTensor sinh(TracedTensor x, GRAPHC_HERE);
TracedTensor cosh(TracedTensor x, GRAPHC_HERE);
TracedTensor asinh(TracedTensor x, GRAPHC_HERE);
TracedTensor acosh(TracedTensor x, GRAPHC_HERE);
TracedTensor atanh(TracedTensor x, GRAPHC_HERE);
TracedTensor expm1(TracedTensor x, GRAPHC_HERE);
TracedTensor log1p(TracedTensor x, GRAPHC_HERE);
TracedTensor log2(TracedTensor x, GRAPHC_HERE);
TracedTensor log10(TracedTensor x, GRAPHC_HERE);
/// -1, 0 or 1 (0 for NaN), as torch.sign.
TracedTensor sign(TracedTensor x, GRAPHC_HERE);
TracedTensor logical_not(TracedTensor x, GRAPHC_HERE);
TracedTensor cast(TracedTensor x, DType dtype, GRAPHC_HERE);

TracedTensor add(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor sub(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor mul(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor div(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor pow(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor maximum(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor minimum(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor atan2(TracedTensor a, TracedTensor b, GRAPHC_HERE);
/// The remainder with the dividend's sign (C's fmod, torch.fmod).
TracedTensor fmod(TracedTensor a, TracedTensor b, GRAPHC_HERE);
/// The remainder with the divisor's sign (Python's %, torch.remainder).
TracedTensor remainder(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor floor_divide(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor eq(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor ne(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor lt(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor le(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor gt(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor ge(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor logical_and(TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor logical_or(TracedTensor a, TracedTensor b, GRAPHC_HERE);

TracedTensor where(TracedTensor condition, TracedTensor a, TracedTensor b, GRAPHC_HERE);
TracedTensor clamp(TracedTensor x, std::optional<double> min, std::optional<double> max, GRAPHC_HERE);

/// A rank-0 tensor of `dtype` holding `value` (what `x * 2.0` uses).
TracedTensor scalar(double value, DType dtype, GRAPHC_HERE);

// Operators: torch's meanings (== and != compare elementwise). A double
// operand becomes a rank-0 tensor of the other operand's dtype.
TracedTensor operator+(TracedTensor a, TracedTensor b);
TracedTensor operator-(TracedTensor a, TracedTensor b);
TracedTensor operator*(TracedTensor a, TracedTensor b);
TracedTensor operator/(TracedTensor a, TracedTensor b);
TracedTensor operator-(TracedTensor a);
TracedTensor operator<(TracedTensor a, TracedTensor b);
TracedTensor operator<=(TracedTensor a, TracedTensor b);
TracedTensor operator>(TracedTensor a, TracedTensor b);
TracedTensor operator>=(TracedTensor a, TracedTensor b);
TracedTensor operator==(TracedTensor a, TracedTensor b);
TracedTensor operator!=(TracedTensor a, TracedTensor b);
TracedTensor operator&(TracedTensor a, TracedTensor b);  // logical_and, as torch's & on bool
TracedTensor operator|(TracedTensor a, TracedTensor b);  // logical_or
TracedTensor operator~(TracedTensor a);                  // logical_not
TracedTensor operator+(TracedTensor a, double b);
TracedTensor operator+(double a, TracedTensor b);
TracedTensor operator-(TracedTensor a, double b);
TracedTensor operator-(double a, TracedTensor b);
TracedTensor operator*(TracedTensor a, double b);
TracedTensor operator*(double a, TracedTensor b);
TracedTensor operator/(TracedTensor a, double b);
TracedTensor operator/(double a, TracedTensor b);
TracedTensor operator<(TracedTensor a, double b);
TracedTensor operator>(TracedTensor a, double b);

// --- reductions and normalisation -------------------------------------------
/// dims empty: over every dim.
TracedTensor sum(TracedTensor x, std::vector<int64_t> dims = {}, bool keepdim = false, GRAPHC_HERE);
TracedTensor mean(TracedTensor x, std::vector<int64_t> dims = {}, bool keepdim = false, GRAPHC_HERE);
TracedTensor amax(TracedTensor x, std::vector<int64_t> dims = {}, bool keepdim = false, GRAPHC_HERE);
TracedTensor amin(TracedTensor x, std::vector<int64_t> dims = {}, bool keepdim = false, GRAPHC_HERE);
TracedTensor prod(TracedTensor x, std::vector<int64_t> dims = {}, bool keepdim = false, GRAPHC_HERE);
/// The i64 index of the first maximum (minimum) along dim; a NaN counts as one.
TracedTensor argmax(TracedTensor x, int64_t dim, bool keepdim = false, GRAPHC_HERE);
TracedTensor argmin(TracedTensor x, int64_t dim, bool keepdim = false, GRAPHC_HERE);
/// ONNX CumSum along dim (exclusive: each sum leaves its own element out).
TracedTensor cumsum(TracedTensor x, int64_t dim, bool exclusive = false, bool reverse = false, GRAPHC_HERE);
TracedTensor softmax(TracedTensor x, int64_t dim, GRAPHC_HERE);
TracedTensor log_softmax(TracedTensor x, int64_t dim, GRAPHC_HERE);
TracedTensor layer_norm(TracedTensor x, TracedTensor weight, std::optional<TracedTensor> bias = std::nullopt,
                        double eps = 1e-5, GRAPHC_HERE);
/// torch.nn.functional.batch_norm in eval mode: x [N, C, ...], the rest [C].
TracedTensor batch_norm(TracedTensor x, TracedTensor mean, TracedTensor var, TracedTensor weight, TracedTensor bias,
                        double eps = 1e-5, GRAPHC_HERE);
/// torch.nn.functional.group_norm: x [N, C, ...], weight and bias [C].
TracedTensor group_norm(TracedTensor x, TracedTensor weight, TracedTensor bias, int64_t groups, double eps = 1e-5,
                        GRAPHC_HERE);

// --- convolution and pooling (over the trailing spatial dims of [N, C, ...]) --
/// The attributes of a window op; empty lists take the defaults (stride and
/// dilation 1, padding 0). `padding` lists every spatial dim's leading pad,
/// then every trailing one (ONNX's pads).
struct WindowOptions {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;                  // conv, conv_transpose
  std::vector<int64_t> outputPadding;  // conv_transpose
  bool ceilMode = false;               // pools
  bool countIncludePad = false;        // avg_pool
};
/// torch's conv1d/conv2d/conv3d: w [C_out, C_in / groups, kernel...].
TracedTensor conv(TracedTensor x, TracedTensor w, std::optional<TracedTensor> b = std::nullopt,
                  const WindowOptions& options = {}, GRAPHC_HERE);
/// torch's conv_transpose: w [C_in, C_out / groups, kernel...].
TracedTensor conv_transpose(TracedTensor x, TracedTensor w, std::optional<TracedTensor> b = std::nullopt,
                            const WindowOptions& options = {}, GRAPHC_HERE);
TracedTensor max_pool(TracedTensor x, std::vector<int64_t> kernel, const WindowOptions& options = {}, GRAPHC_HERE);
TracedTensor avg_pool(TracedTensor x, std::vector<int64_t> kernel, const WindowOptions& options = {}, GRAPHC_HERE);

// --- linear algebra -------------------------------------------------------
TracedTensor matmul(TracedTensor a, TracedTensor b, GRAPHC_HERE);
/// x @ wᵀ + b, w: [out, in] (torch.nn.functional.linear).
TracedTensor linear(TracedTensor x, TracedTensor w, std::optional<TracedTensor> b = std::nullopt, GRAPHC_HERE);
/// torch.linalg.eigh: (eigenvalues ascending, eigenvectors as columns).
std::pair<TracedTensor, TracedTensor> eigh(TracedTensor a, std::string uplo = "L", GRAPHC_HERE);

// --- shape ----------------------------------------------------------------
TracedTensor reshape(TracedTensor x, std::vector<Size> shape, GRAPHC_HERE);
TracedTensor permute(TracedTensor x, std::vector<int64_t> dims, GRAPHC_HERE);
TracedTensor transpose(TracedTensor x, int64_t dim0, int64_t dim1, GRAPHC_HERE);
TracedTensor expand(TracedTensor x, std::vector<Size> shape, GRAPHC_HERE);
TracedTensor slice(TracedTensor x, int64_t dim, std::optional<int64_t> start = std::nullopt,
                   std::optional<int64_t> end = std::nullopt, int64_t step = 1, GRAPHC_HERE);
TracedTensor concat(std::vector<TracedTensor> xs, int64_t dim, GRAPHC_HERE);
TracedTensor squeeze(TracedTensor x, std::optional<int64_t> dim = std::nullopt, GRAPHC_HERE);
TracedTensor unsqueeze(TracedTensor x, int64_t dim, GRAPHC_HERE);
/// x[..., index[...], ...] along dim (numpy.take; torch.index_select for a 1-D index).
TracedTensor index_select(TracedTensor x, int64_t dim, TracedTensor index, GRAPHC_HERE);
/// torch.gather: out[i] = x[i with dim replaced by index[i]].
TracedTensor gather(TracedTensor x, int64_t dim, TracedTensor index, GRAPHC_HERE);
/// ONNX GatherND: the slices of x at the coordinates in index's last dim.
TracedTensor gather_nd(TracedTensor x, TracedTensor index, int64_t batchDims = 0, GRAPHC_HERE);
/// ONNX ScatterND: x with updates written (reduction "none") or combined
/// ("add", "mul", "max", "min") at the coordinates in index's last dim.
TracedTensor scatter_nd(TracedTensor x, TracedTensor index, TracedTensor updates, std::string reduction = "none",
                        GRAPHC_HERE);
/// ONNX Resize to `size`: mode "nearest" or "linear"; coordinates
/// "asymmetric", "half_pixel", "pytorch_half_pixel" or "align_corners".
TracedTensor resize(TracedTensor x, std::vector<Size> size, std::string mode = "nearest",
                    std::string coordinates = "asymmetric", GRAPHC_HERE);

// --- creation -------------------------------------------------------------
/// A constant with `value`'s dtype, shape and contents.
TracedTensor constant(const Tensor& value, GRAPHC_HERE);
/// torch.full: `shape` may hold symbolic sizes of the graph's inputs.
TracedTensor full(double value, DType dtype, std::vector<Size> shape, GRAPHC_HERE);
/// start + step · index along dim, as torch.arange broadcast over `shape`.
TracedTensor iota(DType dtype, std::vector<Size> shape, int64_t dim, double start = 0, double step = 1, GRAPHC_HERE);

// --- control flow ---------------------------------------------------------
using BranchFn = std::function<TracedList(const TracedList&)>;
/// torch.cond: `pred` is a bool[] tensor; each branch receives `operands`
/// (as its own values) and returns the same number and types of results.
TracedList cond(TracedTensor pred, const BranchFn& thenFn, const BranchFn& elseFn, const TracedList& operands,
                GRAPHC_HERE);

#undef GRAPHC_HERE

namespace detail {
inline TracedList toList(TracedTensor t) { return {t}; }
inline TracedList toList(TracedList l) { return l; }
inline TracedList toList(std::pair<TracedTensor, TracedTensor> p) { return {p.first, p.second}; }
template <typename... T>
TracedList toList(std::tuple<T...> t) {
  return std::apply([](auto... x) { return TracedList{x...}; }, t);
}

template <typename F, size_t... I>
constexpr bool invocableWith(std::index_sequence<I...>) {
  return std::is_invocable_v<F&, decltype((void)I, TracedTensor{})...>;
}

/// Calls `f` with the list, or spread over its arguments (f(x, w, b)).
template <typename F, size_t N = 0>
TracedList invokeTraced(F& f, const TracedList& args) {
  if constexpr (std::is_invocable_v<F&, const TracedList&>) {
    return toList(f(args));
  } else if constexpr (N > 12) {
    throw Error("graphc::trace: the function takes neither a TracedList nor up to 12 TracedTensors");
  } else {
    if constexpr (invocableWith<F>(std::make_index_sequence<N>{})) {
      if (args.size() == N)
        return [&]<size_t... I>(std::index_sequence<I...>) {
          return toList(f(args[I]...));
        }(std::make_index_sequence<N>{});
    }
    return invokeTraced<F, N + 1>(f, args);
  }
}

template <typename F>
BranchFn asBranch(F f) {
  return [f = std::move(f)](const TracedList& args) mutable { return invokeTraced(f, args); };
}

Graph traceList(const BranchFn& fn, const std::vector<TensorSpec>& inputs, const std::string& name);
}  // namespace detail

/// cond with branches of any traced-function shape (f(a, b) -> TracedTensor, ...).
template <typename Then, typename Else>
  requires(!std::is_same_v<std::decay_t<Then>, BranchFn> || !std::is_same_v<std::decay_t<Else>, BranchFn>)
TracedList cond(TracedTensor pred, Then thenFn, Else elseFn, const TracedList& operands,
                SourceLocation loc = SourceLocation::current()) {
  return cond(pred, detail::asBranch(std::move(thenFn)), detail::asBranch(std::move(elseFn)), operands, loc);
}

/// Calls `fn` once on symbolic inputs described by `inputs` and returns
/// the graph it traced (verified). fn takes a TracedList or one
/// TracedTensor per input, and returns a TracedTensor, a TracedList, a pair
/// or a tuple of them.
template <typename F>
Graph trace(F fn, const std::vector<TensorSpec>& inputs, const std::string& name = "traced") {
  return detail::traceList(detail::asBranch(std::move(fn)), inputs, name);
}

}  // namespace graphc
