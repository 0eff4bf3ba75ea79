#include "codegen/cuda/CudaEmitter.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "codegen/cuda/Preamble.h"
#include "ir/Diagnostics.h"
#include "runtime/ReferenceOps.h"

namespace graphc::codegen::cuda {

using namespace ir::kernel;
using ir::DType;
using ir::OpId;

const char* strategyName(Strategy s) {
  switch (s) {
    case Strategy::Pointwise: return "pointwise";
    case Strategy::WarpPerRow: return "warp-per-row";
    case Strategy::BlockPerRow: return "block-per-row";
    case Strategy::GemmSimt: return "gemm-simt";
    case Strategy::GemmTensorCore: return "gemm-mma";
  }
  return "?";
}

namespace {

/// Rows up to this many elements (static) get a warp each; longer or
/// symbolic rows a block each.
constexpr int64_t kWarpRowMax = 512;

int64_t staticExtent(const std::vector<ir::Dim>& dims) {
  int64_t n = 1;
  for (const ir::Dim& d : dims) {
    if (!d.isStatic()) return -1;
    n *= d.size;
  }
  return n;
}

/// The C++ type a value of `t` is computed in.
std::string computeType(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::I8: return "signed char";
    case DType::I32: return "int";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

/// The C++ type a buffer of `t` stores.
std::string storageType(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16: return "unsigned short";
    case DType::Bool: return "unsigned char";
    default: return computeType(t);
  }
}

/// Wraps a computed float of `t` so it holds what `t` holds.
std::string rounded(DType t, const std::string& v) {
  if (t == DType::F16) return "gc::round_f16(" + v + ")";
  if (t == DType::BF16) return "gc::round_bf16(" + v + ")";
  return v;
}

std::string fromStorage(DType t, const std::string& raw) {
  switch (t) {
    case DType::F16: return "gc::f16_to_f32(" + raw + ")";
    case DType::BF16: return "gc::bf16_to_f32(" + raw + ")";
    case DType::Bool: return "(" + raw + " != 0)";
    default: return raw;
  }
}

std::string toStorage(DType t, const std::string& v) {
  switch (t) {
    case DType::F16: return "gc::f32_to_f16(" + v + ")";
    case DType::BF16: return "gc::f32_to_bf16(" + v + ")";
    case DType::Bool: return "(unsigned char)(" + v + ")";
    default: return v;
  }
}

std::string floatLiteral(DType t, double v) {
  const bool f64 = t == DType::F64;
  if (std::isnan(v)) return f64 ? "gc::nan_f64()" : "gc::nan_f32()";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (f64 ? "gc::inf_f64()" : "gc::inf_f32()");
  std::string s = fmt::format("{:.17g}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f64 ? s : s + "f";
}

/// An int64 literal; INT64_MIN has no decimal spelling of type long long.
std::string i64Literal(int64_t v) { return v == INT64_MIN ? "(i64)0x8000000000000000ull" : fmt::format("{}ll", v); }

/// An integer or bool literal of dtype `t`, exact.
std::string intLiteral(DType t, int64_t v) {
  if (t == DType::Bool) return v != 0 ? "true" : "false";
  if (t == DType::I64) return i64Literal(v);
  return fmt::format("({})({})", computeType(t), v);
}

/// A small literal (0 for neg/abs/relu) of any dtype.
std::string literal(DType t, double v) {
  if (ir::isFloat(t)) return floatLiteral(t, runtime::reference::roundTo(t, v));
  return intLiteral(t, static_cast<int64_t>(v));
}

/// Emits one kernel's function. Statements go to a list of lines with
/// indentation; each expression becomes a const temporary (v0, v1, ...),
/// memoised in the innermost scope that computed it.
class KernelWriter {
 public:
  KernelWriter(const Kernel& k, CudaKernel& info) : k_(k), info_(info) {
    const std::vector<std::string> symbols = symbolsOf(k);
    for (size_t s = 0; s < symbols.size(); ++s) symbolName_[symbols[s]] = fmt::format("s{}", s);
    info_.symbols = symbols;
    vars_.assign(k.outer.size() + k.reduceSizes.size() + 1, "");
  }

  std::string run() {
    switch (info_.strategy) {
      case Strategy::Pointwise: pointwise(); break;
      case Strategy::WarpPerRow:
      case Strategy::BlockPerRow: reduction(); break;
      case Strategy::GemmSimt: gemmSimt(); break;
      case Strategy::GemmTensorCore: gemmTensorCore(); break;
    }
    std::string out;
    for (const std::string& l : lines_) out += l + "\n";
    return out;
  }

 private:
  // ---- text ----------------------------------------------------------------

  template <typename... Args>
  void line(fmt::format_string<Args...> f, Args&&... args) {
    lines_.push_back(std::string(static_cast<size_t>(indent_) * 2, ' ') + fmt::format(f, std::forward<Args>(args)...));
  }
  void open(const std::string& head) {
    lines_.push_back(std::string(static_cast<size_t>(indent_) * 2, ' ') + head + " {");
    ++indent_;
    scopes_.emplace_back();
  }
  void close() {
    scopes_.pop_back();
    --indent_;
    line("}}");
  }

  std::string fresh() { return fmt::format("v{}", temps_++); }

  /// The parameter list: buffers, symbols, then the strategy's extents.
  void signature(const std::vector<std::string>& extents) {
    std::string params;
    auto add = [&](const std::string& p) { params += (params.empty() ? "" : ", ") + p; };
    for (const Buffer& b : k_.inputs) add(fmt::format("const {}* {}", storageType(b.type.dtype), b.name));
    for (const Buffer& b : k_.outputs) add(fmt::format("{}* {}", storageType(b.type.dtype), b.name));
    for (size_t s = 0; s < info_.symbols.size(); ++s) add(fmt::format("const i64 s{}", s));
    for (const std::string& e : extents) add("const i64 " + e);
    line("// {} ({}): {}", k_.name, k_.kind, strategyName(info_.strategy));
    open(fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({})", info_.blockThreads, k_.name, params));
  }

  // ---- indices -------------------------------------------------------------

  std::string dim(const ir::Dim& d) { return d.isStatic() ? fmt::format("{}ll", d.size) : symbolName_.at(d.symbol); }

  std::string index(const IndexPtr& e) {
    switch (e->kind) {
      case Index::Kind::Const: return i64Literal(e->value);
      case Index::Kind::Var: {
        const std::string& v = vars_.at(static_cast<size_t>(e->value));
        if (v.empty()) throw ir::Error(fmt::format("cuda codegen: loop variable i{} is not bound here", e->value));
        return v;
      }
      case Index::Kind::Sym: return symbolName_.at(e->symbol);
      case Index::Kind::Add: return fmt::format("({} + {})", index(e->lhs), index(e->rhs));
      case Index::Kind::Mul: return fmt::format("({} * {})", index(e->lhs), index(e->rhs));
      case Index::Kind::Div: return fmt::format("({} / {})", index(e->lhs), index(e->rhs));
      case Index::Kind::Mod: return fmt::format("({} % {})", index(e->lhs), index(e->rhs));
      case Index::Kind::Indirect: return fmt::format("gc::wrap_index((i64)({}), {})", value(e->load), index(e->rhs));
    }
    return "?";
  }

  std::string offset(const ir::TensorType& t, const std::vector<IndexPtr>& idx) {
    std::string linear;
    for (size_t d = 0; d < idx.size(); ++d)
      linear = d == 0 ? index(idx[d]) : fmt::format("({} * {} + {})", linear, dim(t.shape[d]), index(idx[d]));
    return linear.empty() ? "0" : linear;
  }

  /// Declares i<first>.. as the multi-index of `linear` over `dims`.
  void unravel(const std::string& linear, const std::vector<ir::Dim>& dims, size_t first, const std::string& prefix = "i") {
    std::string rest = linear;
    for (size_t d = dims.size(); d-- > 0;) {
      const std::string name = fmt::format("{}{}", prefix, first + d);
      if (d == 0) {
        line("const i64 {} = {};", name, rest);
      } else {
        line("const i64 {} = {} % {};", name, rest, dim(dims[d]));
        const std::string next = fresh();
        line("const i64 {} = {} / {};", next, rest, dim(dims[d]));
        rest = next;
      }
      vars_[first + d] = name;
    }
  }

  std::string product(const std::vector<ir::Dim>& dims) {
    std::string p;
    for (const ir::Dim& d : dims) p += (p.empty() ? "" : " * ") + dim(d);
    return p.empty() ? "1ll" : p;
  }

  // ---- expressions ---------------------------------------------------------

  std::string value(const ExprPtr& e) {
    if (auto it = overrides_.find(e.get()); it != overrides_.end()) return it->second;
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->find(e.get()); it != s->end()) return it->second;
    std::string v = compute(*e);
    scopes_.back()[e.get()] = v;
    return v;
  }

  std::string define(DType t, const std::string& expr) {
    const std::string name = fresh();
    line("const {} {} = {};", computeType(t), name, expr);
    return name;
  }

  std::string compute(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Load: {
        const Buffer& in = k_.inputs[static_cast<size_t>(e.buffer)];
        return define(e.dtype, fromStorage(in.type.dtype, fmt::format("{}[{}]", in.name, offset(in.type, e.index))));
      }
      case Expr::Kind::Const: return ir::isFloat(e.dtype) ? literal(e.dtype, e.value) : intLiteral(e.dtype, e.intValue);
      case Expr::Kind::Acc: {
        if (accumulator_.empty()) throw ir::Error("cuda codegen: a GEMM accumulator outside a matmul kernel");
        return define(e.dtype, rounded(e.dtype, e.dtype == DType::F64 ? accumulator_ : "(float)(" + accumulator_ + ")"));
      }
      case Expr::Kind::Reduce: throw ir::Error("cuda codegen: a reduction read outside its row");
      case Expr::Kind::Select: return select(e);
      case Expr::Kind::Op: return define(e.dtype, op(e));
    }
    return "?";
  }

  /// concat's piecewise read as if/else: a piece's index map is only in
  /// bounds inside its own range, so only the chosen piece is evaluated.
  std::string select(const Expr& e) {
    const std::string result = fresh();
    const std::string i = index(e.index[0]);
    line("{} {};", computeType(e.dtype), result);
    for (size_t k = 0; k < e.args.size(); ++k) {
      const bool last = k + 1 == e.args.size();
      const std::string head = k == 0 ? fmt::format("if ({} < {}ll)", i, e.bounds[k])
                               : last ? std::string("else")
                                      : fmt::format("else if ({} < {}ll)", i, e.bounds[k]);
      open(head);
      line("{} = {};", result, value(e.args[k]));
      close();
    }
    return result;
  }

  static std::string mathFn(const char* name, bool f64) { return f64 ? std::string(name) : std::string(name) + "f"; }

  std::string floatUnary(const Expr& e, const std::string& x, bool f64) {
    const std::string one = f64 ? "1.0" : "1.0f", zero = f64 ? "0.0" : "0.0f", half = f64 ? "0.5" : "0.5f";
    auto sigmoid = [&](const std::string& v) { return fmt::format("({} / ({} + {}(-{})))", one, one, mathFn("exp", f64), v); };
    switch (e.op) {
      case OpId::Neg: return "(-" + x + ")";
      case OpId::Abs: return mathFn("fabs", f64) + "(" + x + ")";
      case OpId::Exp: return mathFn("exp", f64) + "(" + x + ")";
      case OpId::Log: return mathFn("log", f64) + "(" + x + ")";
      case OpId::Sqrt: return mathFn("sqrt", f64) + "(" + x + ")";
      case OpId::Rsqrt: return fmt::format("({} / {}({}))", one, mathFn("sqrt", f64), x);
      case OpId::Sin: return mathFn("sin", f64) + "(" + x + ")";
      case OpId::Cos: return mathFn("cos", f64) + "(" + x + ")";
      case OpId::Tanh: return mathFn("tanh", f64) + "(" + x + ")";
      case OpId::Erf: return mathFn("erf", f64) + "(" + x + ")";
      case OpId::Sigmoid: return sigmoid(x);
      case OpId::Silu: return fmt::format("({} * {})", x, sigmoid(x));
      case OpId::Reciprocal: return fmt::format("({} / {})", one, x);
      case OpId::Relu: return fmt::format("({0} <= {1} ? {1} : {0})", x, zero);  // NaN stays NaN, as torch.relu
      case OpId::Gelu: {
        const ir::Attribute* a = e.attrs.find("approximate");
        if (a && a->s == "tanh")
          return fmt::format("({h} * {x} * ({o} + {t}({c} * ({x} + {k} * {x} * {x} * {x}))))", fmt::arg("h", half),
                             fmt::arg("x", x), fmt::arg("o", one), fmt::arg("t", mathFn("tanh", f64)),
                             fmt::arg("c", f64 ? "0.7978845608028654" : "0.7978845608028654f"),
                             fmt::arg("k", f64 ? "0.044715" : "0.044715f"));
        return fmt::format("({h} * {x} * ({o} + {e}({x} * {r})))", fmt::arg("h", half), fmt::arg("x", x), fmt::arg("o", one),
                           fmt::arg("e", mathFn("erf", f64)), fmt::arg("r", f64 ? "0.7071067811865476" : "0.7071067811865476f"));
      }
      default: break;
    }
    throw ir::Error(fmt::format("cuda codegen: no float lowering for '{}'", ir::opInfo(e.op).name));
  }

  /// Integer arithmetic wraps in the dtype's width (through unsigned).
  static std::string wrapped(DType t, const std::string& a, const char* op, const std::string& b) {
    if (t == DType::I8) return fmt::format("(signed char)({} {} {})", a, op, b);
    const char* u = t == DType::I64 ? "u64" : "unsigned";
    return fmt::format("({})(({}){} {} ({}){})", computeType(t), u, a, op, u, b);
  }

  std::string intUnary(const Expr& e, const std::string& x, DType t) {
    switch (e.op) {
      case OpId::Neg: return wrapped(t, literal(t, 0), "-", x);
      case OpId::Abs: return fmt::format("({} < 0 ? {} : {})", x, wrapped(t, literal(t, 0), "-", x), x);
      case OpId::Relu: return fmt::format("({0} < 0 ? {1} : {0})", x, literal(t, 0));
      default: break;
    }
    throw ir::Error(fmt::format("cuda codegen: no integer lowering for '{}'", ir::opInfo(e.op).name));
  }

  static std::string nonZero(const std::string& v, DType t) {
    return t == DType::Bool ? v : fmt::format("({} != 0)", v);
  }

  /// Tensor::setDouble/setInt's conversion rules.
  std::string convert(const std::string& v, DType from, DType to) {
    if (ir::isFloat(from)) {
      if (ir::isFloat(to)) return rounded(to, fmt::format("({})({})", computeType(to), v));
      if (to == DType::Bool) return fmt::format("({} != 0)", v);
      if (to == DType::I64) return fmt::format("gc::float_to_i64((double)({}))", v);
      const bool i8 = to == DType::I8;
      return fmt::format("gc::float_to_int<{}>((double)({}), {}, {})", computeType(to), v, i8 ? "-128.0" : "-2147483648.0",
                         i8 ? "127.0" : "2147483647.0");
    }
    if (ir::isFloat(to)) return rounded(to, fmt::format("({})({})", computeType(to), v));
    if (to == DType::Bool) return nonZero(v, from);
    return fmt::format("({})({})", computeType(to), v);
  }

  std::string op(const Expr& e) {
    std::vector<std::string> args;
    for (const ExprPtr& a : e.args) args.push_back(value(a));
    const DType argType = e.args.empty() ? e.dtype : e.args[e.op == OpId::Where ? 1 : 0]->dtype;
    const bool isFloat = ir::isFloat(argType);
    const bool f64 = argType == DType::F64;
    const ir::OpInfo& info = ir::opInfo(e.op);
    switch (e.op) {
      case OpId::Cast: return convert(args[0], e.args[0]->dtype, e.dtype);
      case OpId::LogicalNot: return "!" + nonZero(args[0], e.args[0]->dtype);
      case OpId::Where: return fmt::format("({} ? {} : {})", args[0], args[1], args[2]);
      case OpId::Clamp: {
        std::string r = args[0];
        const ir::Attribute* lo = e.attrs.find("min");
        const ir::Attribute* hi = e.attrs.find("max");
        if (isFloat) {  // min first, then max; NaN stays NaN (torch.clamp)
          if (lo) r = fmt::format("gc::fmaximum({}, {})", r, floatLiteral(f64 ? DType::F64 : DType::F32, lo->asDouble()));
          if (hi) r = fmt::format("gc::fminimum({}, {})", r, floatLiteral(f64 ? DType::F64 : DType::F32, hi->asDouble()));
          return rounded(e.dtype, r);
        }
        r = "(i64)" + r;  // an integer bound outside the dtype's range still clamps (in i64)
        if (lo) r = fmt::format("max({}, {})", r, i64Literal(lo->i));
        if (hi) r = fmt::format("min({}, {})", r, i64Literal(hi->i));
        return fmt::format("({})({})", computeType(e.dtype), r);
      }
      default: break;
    }
    if (info.category == ir::OpCategory::Unary)
      return isFloat ? rounded(e.dtype, floatUnary(e, args[0], f64)) : intUnary(e, args[0], argType);
    if (e.dtype == DType::Bool) {
      const DType t = e.args[0]->dtype;
      switch (e.op) {  // C++'s float != is true for NaN, every other compare is ordered: the kernel IR's rules
        case OpId::LogicalAnd: return fmt::format("({} && {})", nonZero(args[0], t), nonZero(args[1], e.args[1]->dtype));
        case OpId::LogicalOr: return fmt::format("({} || {})", nonZero(args[0], t), nonZero(args[1], e.args[1]->dtype));
        case OpId::Eq: return fmt::format("({} == {})", args[0], args[1]);
        case OpId::Ne: return fmt::format("({} != {})", args[0], args[1]);
        case OpId::Lt: return fmt::format("({} < {})", args[0], args[1]);
        case OpId::Le: return fmt::format("({} <= {})", args[0], args[1]);
        case OpId::Gt: return fmt::format("({} > {})", args[0], args[1]);
        case OpId::Ge: return fmt::format("({} >= {})", args[0], args[1]);
        default: throw ir::Error(fmt::format("cuda codegen: no bool lowering for '{}'", info.name));
      }
    }
    if (isFloat) {
      std::string r;
      switch (e.op) {
        case OpId::Add: r = fmt::format("({} + {})", args[0], args[1]); break;
        case OpId::Sub: r = fmt::format("({} - {})", args[0], args[1]); break;
        case OpId::Mul: r = fmt::format("({} * {})", args[0], args[1]); break;
        case OpId::Div: r = fmt::format("({} / {})", args[0], args[1]); break;
        case OpId::Pow: r = fmt::format("{}({}, {})", mathFn("pow", f64), args[0], args[1]); break;
        case OpId::Maximum: r = fmt::format("gc::fmaximum({}, {})", args[0], args[1]); break;
        case OpId::Minimum: r = fmt::format("gc::fminimum({}, {})", args[0], args[1]); break;
        default: throw ir::Error(fmt::format("cuda codegen: no float lowering for '{}'", info.name));
      }
      return rounded(e.dtype, r);
    }
    switch (e.op) {
      case OpId::Add: return wrapped(e.dtype, args[0], "+", args[1]);
      case OpId::Sub: return wrapped(e.dtype, args[0], "-", args[1]);
      case OpId::Mul: return wrapped(e.dtype, args[0], "*", args[1]);
      case OpId::Maximum: return fmt::format("({0} > {1} ? {0} : {1})", args[0], args[1]);
      case OpId::Minimum: return fmt::format("({0} < {1} ? {0} : {1})", args[0], args[1]);
      default: break;
    }
    throw ir::Error(fmt::format("cuda codegen: no integer lowering for '{}'", info.name));
  }

  /// Computes every store's value first, then stores: an in-place kernel's
  /// output may be the buffer an input of the same point was read from.
  void stores(bool insideReduction, const std::string& guard = "") {
    std::vector<std::pair<const Store*, std::string>> values;
    for (const Store& s : k_.stores)
      if (s.insideReduction == insideReduction) values.emplace_back(&s, value(s.value));
    if (values.empty()) return;
    if (!guard.empty()) open("if (" + guard + ")");
    for (auto& [s, v] : values) {
      const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
      line("{}[{}] = {};", out.name, offset(out.type, s->index), toStorage(out.type.dtype, v));
    }
    if (!guard.empty()) close();
  }

  // ---- pointwise -----------------------------------------------------------

  bool isLastVar(const IndexPtr& i) const {
    return i->kind == Index::Kind::Var && i->value == static_cast<int64_t>(k_.outer.size()) - 1;
  }

  /// Whether an access of `t` at `idx` is unit-stride along the last outer
  /// loop and lane-aligned: its last index is that loop's variable and its
  /// last dim is the loop's size.
  bool contiguous(const ir::TensorType& t, const std::vector<IndexPtr>& idx) const {
    if (idx.empty() || k_.outer.empty() || !isLastVar(idx.back()) || t.shape.back() != k_.outer.back()) return false;
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      if (readsVar(idx[d], static_cast<int64_t>(k_.outer.size()) - 1)) return false;
    return true;
  }

  static bool readsVar(const IndexPtr& i, int64_t v) {
    return ir::kernel::readsVar(i, [v](int64_t var) { return var == v; });
  }

  /// The loads every point evaluates (not those inside a concat's pieces,
  /// which only some points may read) that are contiguous.
  void vectorLoads(const ExprPtr& e, std::vector<const Expr*>& out, std::unordered_set<const Expr*>& seen) {
    if (!seen.insert(e.get()).second) return;
    if (e->kind == Expr::Kind::Select) return;
    if (e->kind == Expr::Kind::Load && contiguous(k_.inputs[static_cast<size_t>(e->buffer)].type, e->index)) out.push_back(e.get());
    for (const ExprPtr& a : e->args) vectorLoads(a, out, seen);
  }

  void pointwise() {
    const size_t rank = k_.outer.size();
    std::vector<const Expr*> loads;
    std::unordered_set<const Expr*> seen;
    std::vector<const Store*> vstores;
    for (const Store& s : k_.stores) {
      vectorLoads(s.value, loads, seen);
      if (contiguous(k_.outputs[static_cast<size_t>(s.buffer)].type, s.index)) vstores.push_back(&s);
    }
    int64_t widest = 0;
    for (const Expr* l : loads) widest = std::max<int64_t>(widest, ir::dtypeSize(k_.inputs[static_cast<size_t>(l->buffer)].type.dtype));
    for (const Store* s : vstores) widest = std::max<int64_t>(widest, ir::dtypeSize(k_.outputs[static_cast<size_t>(s->buffer)].type.dtype));
    const int width = widest == 0 ? 1 : static_cast<int>(std::min<int64_t>(8, 16 / widest));
    info_.vectorWidth = (rank > 0 && width > 1 && !(loads.empty() && vstores.empty())) ? width : 1;
    signature({"total"});
    line("const i64 stride = (i64)gridDim.x * blockDim.x;");
    line("const i64 first = (i64)blockIdx.x * blockDim.x + threadIdx.x;");
    if (info_.vectorWidth > 1) {
      const int w = info_.vectorWidth;
      std::string aligned = fmt::format("{} % {} == 0", dim(k_.outer.back()), w);
      std::unordered_set<std::string> named;
      auto alignedBuffer = [&](const Buffer& b) {
        if (named.insert(b.name).second)
          aligned += fmt::format(" && (u64){} % {} == 0", b.name, w * ir::dtypeSize(b.type.dtype));
      };
      for (const Expr* l : loads) alignedBuffer(k_.inputs[static_cast<size_t>(l->buffer)]);
      for (const Store* s : vstores) alignedBuffer(k_.outputs[static_cast<size_t>(s->buffer)]);
      line("// {}-wide vector path: the last dim and every vector buffer's address allow it", w);
      open(fmt::format("if ({})", aligned));
      open(fmt::format("for (i64 q = first; q < total / {}; q += stride)", w));
      unravel(fmt::format("q * {}", w), k_.outer, 0);
      const std::string base = vars_[rank - 1];
      // The vector loads, all before any store.
      std::unordered_map<const Expr*, std::string> lanes;
      for (const Expr* l : loads) {
        const Buffer& in = k_.inputs[static_cast<size_t>(l->buffer)];
        const std::string vec = fresh();
        line("const gc::Vec<{0}, {1}> {2} = *reinterpret_cast<const gc::Vec<{0}, {1}>*>({3} + {4});", storageType(in.type.dtype), w,
             vec, in.name, offset(in.type, l->index));
        lanes[l] = vec;
      }
      std::unordered_map<const Store*, std::string> results;
      for (const Store* s : vstores) {
        const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
        results[s] = fresh();
        line("gc::Vec<{}, {}> {};", storageType(out.type.dtype), w, results[s]);
      }
      line("#pragma unroll");
      open(fmt::format("for (int lane = 0; lane < {}; ++lane)", w));
      line("const i64 il = {} + lane;", base);
      vars_[rank - 1] = "il";
      for (auto& [l, vec] : lanes) overrides_[l] = define(l->dtype, fromStorage(k_.inputs[static_cast<size_t>(l->buffer)].type.dtype, vec + ".v[lane]"));
      std::vector<std::pair<const Store*, std::string>> values;
      for (const Store& s : k_.stores) values.emplace_back(&s, value(s.value));
      for (auto& [s, v] : values) {
        const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
        if (results.count(s)) line("{}.v[lane] = {};", results[s], toStorage(out.type.dtype, v));
        else line("{}[{}] = {};", out.name, offset(out.type, s->index), toStorage(out.type.dtype, v));
      }
      overrides_.clear();
      close();
      vars_[rank - 1] = base;
      for (const Store* s : vstores) {
        const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
        line("*reinterpret_cast<gc::Vec<{0}, {1}>*>({2} + {3}) = {4};", storageType(out.type.dtype), w, out.name,
             offset(out.type, s->index), results[s]);
      }
      close();
      line("return;");
      close();
    }
    open("for (i64 p = first; p < total; p += stride)");
    unravel("p", k_.outer, 0);
    stores(false);
    close();
    close();
  }

  // ---- row reductions ------------------------------------------------------

  void collectReduces(const Expr* e, std::vector<const Expr*>& order, std::unordered_set<const Expr*>& seen) {
    if (!seen.insert(e).second) return;
    for (const ExprPtr& a : e->args) collectReduces(a.get(), order, seen);
    if (e->kind == Expr::Kind::Reduce) order.push_back(e);
  }

  void reduction() {
    const bool warp = info_.strategy == Strategy::WarpPerRow;
    std::vector<const Expr*> order;
    std::unordered_set<const Expr*> seen;
    for (const Store& s : k_.stores) collectReduces(s.value.get(), order, seen);
    signature({"rows", "rowLength"});
    if (!warp) line("__shared__ double scratch[32];");
    const std::string threads = warp ? "32" : "(i64)blockDim.x";
    line("const int lane = {};", warp ? "threadIdx.x & 31" : "threadIdx.x");
    if (warp)
      open(fmt::format("for (i64 row = (i64)blockIdx.x * {0} + (threadIdx.x >> 5); row < rows; row += (i64)gridDim.x * {0})",
                       info_.rowsPerBlock));
    else
      open("for (i64 row = blockIdx.x; row < rows; row += gridDim.x)");
    unravel("row", k_.outer, 0);
    planRowCache(order, warp ? 32 : info_.blockThreads);
    if (!rowCache_.empty()) {
      // The row's loads, once, into registers; every pass below reads them there.
      for (auto& [load, array] : rowCache_) line("{} {}[{}];", computeType(load->dtype), array, rowChunks_);
      openRowLoop(threads, false);
      for (auto& [load, array] : rowCache_) {
        const Buffer& in = k_.inputs[static_cast<size_t>(load->buffer)];
        line("{}[c] = {};", array, fromStorage(in.type.dtype, fmt::format("{}[{}]", in.name, offset(in.type, load->index))));
      }
      closeRowLoop();
    }
    for (const Expr* r : order) overrides_[r] = reduce(*r, warp, threads);
    stores(false, "lane == 0");
    if (std::any_of(k_.stores.begin(), k_.stores.end(), [](const Store& s) { return s.insideReduction; })) {
      openRowLoop(threads, true);
      stores(true);
      closeRowLoop();
    }
    for (const Expr* r : order) overrides_.erase(r);
    close();
    close();
  }

  /// Rows of a static length up to 16 elements per thread are held in
  /// registers: each load that reads the row's elements (outside a concat's
  /// pieces) is done once, into a per-thread array of rowChunks_ elements
  /// (chunk c is element lane + c·threads), and every reduction and store
  /// pass reads the array. Softmax then reads its input once, not three times.
  void planRowCache(const std::vector<const Expr*>& reduces, int threads) {
    rowCache_.clear();
    const int64_t row = staticExtent(k_.reduceSizes);
    if (row <= 0) return;
    const int64_t chunks = (row + threads - 1) / threads;
    if (chunks > 16) return;
    std::vector<const Expr*> loads;
    std::unordered_set<const Expr*> seen;
    std::function<void(const Expr*)> visit = [&](const Expr* e) {
      if (!seen.insert(e).second || e->kind == Expr::Kind::Select) return;
      if (e->kind == Expr::Kind::Load) {
        for (const IndexPtr& i : e->index)
          if (readsVarFrom(i, static_cast<int64_t>(k_.outer.size()))) {
            loads.push_back(e);
            break;
          }
        return;
      }
      for (const ExprPtr& a : e->args) visit(a.get());
    };
    for (const Expr* r : reduces) visit(r->args[0].get());
    for (const Store& s : k_.stores)
      if (s.insideReduction) visit(s.value.get());
    if (loads.empty() || static_cast<int64_t>(loads.size()) * chunks > 64) return;  // register budget
    rowChunks_ = chunks;
    rowThreads_ = threads;
    info_.rowChunks = static_cast<int>(chunks);
    for (const Expr* l : loads) rowCache_.emplace_back(l, fmt::format("row{}", rowCache_.size()));
  }

  static bool readsVarFrom(const IndexPtr& i, int64_t first) {
    return ir::kernel::readsVar(i, [first](int64_t var) { return var >= first; });
  }

  /// A loop over the row's elements of this thread, binding the inner
  /// variables: strided, or (with a row cache) unrolled over the chunks,
  /// the cached loads bound to their registers.
  void openRowLoop(const std::string& threads, bool readCache = true) {
    if (rowCache_.empty()) {
      open(fmt::format("for (i64 e = lane; e < rowLength; e += {})", threads));
    } else {
      line("#pragma unroll");
      open(fmt::format("for (int c = 0; c < {}; ++c)", rowChunks_));
      line("const i64 e = lane + (i64)c * {};", rowThreads_);
      open("if (e < rowLength)");
    }
    unravel("e", k_.reduceSizes, k_.outer.size());
    if (readCache)
      for (auto& [load, array] : rowCache_) scopes_.back()[load] = array + "[c]";
  }

  void closeRowLoop() {
    if (!rowCache_.empty()) close();
    close();
  }

  /// One row's reduction: per-thread strided partials (floats in f64 for
  /// sum/mean, integers in i64), then the fixed tree. Every thread of the
  /// row ends with the value.
  std::string reduce(const Expr& e, bool warp, const std::string& threads) {
    const DType argType = e.args[0]->dtype;
    const bool isFloat = ir::isFloat(argType);
    const bool isSum = e.op == OpId::Sum || e.op == OpId::Mean;
    const bool isMax = e.op == OpId::Amax;
    std::string accType, init, combine;
    if (isSum) {
      accType = isFloat ? "double" : "i64";
      init = isFloat ? "0.0" : "0ll";
      combine = "gc::Sum()";
    } else if (isFloat) {
      accType = argType == DType::F64 ? "double" : "float";
      init = std::string(isMax ? "-" : "") + (argType == DType::F64 ? "gc::inf_f64()" : "gc::inf_f32()");
      combine = isMax ? "gc::FMax()" : "gc::FMin()";
    } else {
      accType = argType == DType::Bool || argType == DType::I8 ? "int" : computeType(argType);
      const char* lowest = argType == DType::I64 ? "(i64)0x8000000000000000ull" : argType == DType::I32 ? "(int)0x80000000u"
                           : argType == DType::I8 ? "-128" : "0";
      const char* highest = argType == DType::I64 ? "0x7fffffffffffffffll" : argType == DType::I32 ? "0x7fffffff"
                            : argType == DType::I8 ? "127" : "1";
      init = isMax ? lowest : highest;
      combine = isMax ? "gc::IMax()" : "gc::IMin()";
    }
    const std::string acc = fresh();
    line("{} {} = {};", accType, acc, init);
    openRowLoop(threads);
    line("{} = {}({}, ({}){});", acc, combine, acc, accType, value(e.args[0]));
    closeRowLoop();
    line("{} = {};", acc, warp ? fmt::format("gc::warp_reduce({}, {})", acc, combine)
                               : fmt::format("gc::block_reduce({}, {}, scratch)", acc, combine));
    std::string r = acc;
    if (e.op == OpId::Mean) r = fmt::format("({} / (double)rowLength)", acc);
    if (isFloat) return define(e.dtype, rounded(e.dtype, fmt::format("({})({})", computeType(e.dtype), r)));
    return define(e.dtype, fmt::format("({})({})", computeType(e.dtype), r));
  }

  // ---- GEMM ----------------------------------------------------------------

  /// Where the outer loops of a GEMM kernel come from: batch dims (grid z),
  /// row dims (flattened to M) and the column dim (N).
  struct GemmDims {
    std::vector<ir::Dim> batch, rows;
    bool hasCol = false;
    bool aHasRows = false;    // a is a matrix (else a vector: M = 1)
    bool bKContiguous = false;  // b's elements along k are adjacent (linear, or a vector)
  };

  GemmDims gemmDims() const {
    const Gemm& g = *k_.gemm;
    GemmDims d;
    const ir::Shape& out = k_.outer;
    const size_t ra = k_.inputs[static_cast<size_t>(g.a)].type.shape.size();
    const size_t rb = k_.inputs[static_cast<size_t>(g.b)].type.shape.size();
    if (g.transposeB) {  // linear: rows are all but the last output dim
      d.rows.assign(out.begin(), out.end() - 1);
      d.hasCol = true;
      d.aHasRows = true;
      d.bKContiguous = true;
      return d;
    }
    const size_t batch = out.size() - (ra > 1) - (rb > 1);
    d.batch.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(batch));
    if (ra > 1) d.rows = {out[batch]};
    d.hasCol = rb > 1;
    d.aHasRows = ra > 1;
    d.bKContiguous = rb == 1;
    return d;
  }

  /// An operand's element offset at the batch point with the row/column and
  /// k variables at 0 (its base for this batch point).
  std::string operandBase(const Buffer& b, const std::vector<IndexPtr>& idx, size_t batchRank) {
    std::vector<std::string> saved = vars_;
    for (size_t v = batchRank; v < vars_.size(); ++v) vars_[v] = "0ll";
    const std::string base = offset(b.type, idx);
    vars_ = std::move(saved);
    return base;
  }

  /// The epilogue at one accumulator element: binds the outer variables of
  /// (row, col) and stores every output.
  void epilogue(const GemmDims& d, const std::string& row, const std::string& col, const std::string& acc) {
    open(fmt::format("if ({} < M && {} < N)", row, col));
    unravel(row, d.rows, d.batch.size(), "r");
    if (d.hasCol) {
      line("const i64 c{} = {};", k_.outer.size() - 1, col);
      vars_[k_.outer.size() - 1] = fmt::format("c{}", k_.outer.size() - 1);
    }
    accumulator_ = acc;
    stores(false);
    accumulator_.clear();
    close();
  }

  void gemmPrologue(const GemmDims& d, std::string& aBase, std::string& bBase) {
    const Gemm& g = *k_.gemm;
    line("const i64 mTiles = (M + {0}) / {1}, nTiles = (N + {2}) / {3};", info_.tileM - 1, info_.tileM, info_.tileN - 1, info_.tileN);
    open("for (i64 bz = blockIdx.z; bz < batch; bz += gridDim.z)");
    unravel("bz", d.batch, 0, "b");
    aBase = fresh();
    bBase = fresh();
    line("const i64 {} = {};", aBase, operandBase(k_.inputs[static_cast<size_t>(g.a)], g.aIndex, d.batch.size()));
    line("const i64 {} = {};", bBase, operandBase(k_.inputs[static_cast<size_t>(g.b)], g.bIndex, d.batch.size()));
    open("for (i64 mt = blockIdx.y; mt < mTiles; mt += gridDim.y)");
    open("for (i64 nt = blockIdx.x; nt < nTiles; nt += gridDim.x)");
    line("const i64 m0 = mt * {}, n0 = nt * {};", info_.tileM, info_.tileN);
  }

  void gemmSimt() {
    const Gemm& g = *k_.gemm;
    const GemmDims d = gemmDims();
    const Buffer& a = k_.inputs[static_cast<size_t>(g.a)];
    const Buffer& b = k_.inputs[static_cast<size_t>(g.b)];
    const bool f64 = a.type.dtype == DType::F64;
    const std::string T = f64 ? "double" : "float";
    signature({"batch", "M", "N", "K"});
    line("__shared__ {} As[8][{}], Bs[8][{}];", T, info_.tileM + 4, info_.tileN + 4);
    line("const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;");
    line("const i64 aRow = {}, bCol = {}, bK = {};", d.aHasRows ? "K" : "0ll", d.bKContiguous ? (d.hasCol ? "K" : "0ll") : "1ll",
         d.bKContiguous ? "1ll" : "N");
    std::string aBase, bBase;
    gemmPrologue(d, aBase, bBase);
    line("{} acc[8][8];", T);
    line("#pragma unroll");
    line("for (int i = 0; i < 8; ++i)");
    line("  for (int j = 0; j < 8; ++j) acc[i][j] = 0;");
    open("for (i64 k0 = 0; k0 < K; k0 += 8)");
    open("for (int e = threadIdx.x; e < 8 * 128; e += 256)");
    line("const int r = e / 8, kk = e % 8;");
    line("const i64 row = m0 + r, k = k0 + kk;");
    line("As[kk][r] = (row < M && k < K) ? ({}){} : ({})0;", T,
         fromStorage(a.type.dtype, fmt::format("{}[{} + row * aRow + k]", a.name, aBase)), T);
    close();
    open("for (int e = threadIdx.x; e < 8 * 128; e += 256)");
    if (d.bKContiguous) line("const int c = e / 8, kk = e % 8;");
    else line("const int c = e % 128, kk = e / 128;");
    line("const i64 col = n0 + c, k = k0 + kk;");
    line("Bs[kk][c] = (col < N && k < K) ? ({}){} : ({})0;", T,
         fromStorage(b.type.dtype, fmt::format("{}[{} + col * bCol + k * bK]", b.name, bBase)), T);
    close();
    line("__syncthreads();");
    line("#pragma unroll");
    open("for (int kk = 0; kk < 8; ++kk)");
    line("{} ra[8], rb[8];", T);
    line("#pragma unroll");
    line("for (int i = 0; i < 8; ++i) {{ ra[i] = As[kk][ty + 16 * i]; rb[i] = Bs[kk][tx + 16 * i]; }}");
    line("#pragma unroll");
    line("for (int i = 0; i < 8; ++i)");
    line("  for (int j = 0; j < 8; ++j) acc[i][j] = fma(ra[i], rb[j], acc[i][j]);");
    close();
    line("__syncthreads();");
    close();
    line("#pragma unroll");
    open("for (int i = 0; i < 8; ++i)");
    line("#pragma unroll");
    open("for (int j = 0; j < 8; ++j)");
    line("const i64 row = m0 + ty + 16 * i, col = n0 + tx + 16 * j;");
    epilogue(d, "row", "col", "acc[i][j]");
    close();
    close();
    close();
    close();
    close();
    close();
  }

  /// f16/bf16 on tensor cores: 8 warps in 2×4, each 64×32 of the 128×128
  /// tile as 4×4 mma.sync m16n8k16 tiles; A row-major and B n-major in
  /// shared memory with k contiguous (rows padded by 8 halves, which spreads
  /// a fragment's reads over all 32 banks), 16-byte global loads where the
  /// layout and alignment allow (checked once per kernel) and prefetched a
  /// k-tile ahead into registers, scalar loads else.
  void gemmTensorCore() {
    const Gemm& g = *k_.gemm;
    const GemmDims d = gemmDims();
    const Buffer& a = k_.inputs[static_cast<size_t>(g.a)];
    const Buffer& b = k_.inputs[static_cast<size_t>(g.b)];
    const char* mma = a.type.dtype == DType::BF16 ? "gc::mma_bf16" : "gc::mma_f16";
    signature({"batch", "M", "N", "K"});
    line("__shared__ __align__(16) unsigned short As[128][40], Bs[128][40];");
    line("const int warp = threadIdx.x >> 5, g = (threadIdx.x & 31) >> 2, t = threadIdx.x & 3;");
    line("const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;");
    line("const i64 aRow = {}, bCol = {}, bK = {};", d.aHasRows ? "K" : "0ll", d.bKContiguous ? (d.hasCol ? "K" : "0ll") : "1ll",
         d.bKContiguous ? "1ll" : "N");
    line("const bool aVec = K % 8 == 0 && (u64){} % 16 == 0;", a.name);
    line("const bool bVec = {} && K % 8 == 0 && (u64){} % 16 == 0;", d.bKContiguous ? "true" : "false", b.name);
    std::string aBase, bBase;
    gemmPrologue(d, aBase, bBase);
    line("float acc[4][4][4];");
    line("#pragma unroll");
    line("for (int i = 0; i < 64; ++i) (&acc[0][0][0])[i] = 0.0f;");
    // Software pipelining on the 16-byte paths: the next k-tile's global
    // loads are issued into registers before this tile's mma work, and
    // stored to shared memory at the top of the next iteration.
    line("uint4 nextA[2], nextB[2];");
    line("auto fetchA = [&](i64 k0) {{");
    line("  for (int q = 0; q < 2; ++q) {{");
    line("    const int e = threadIdx.x + q * 256, r = e >> 2, kq = (e & 3) * 8;");
    line("    const i64 row = m0 + r, k = k0 + kq;");
    line("    nextA[q] = row < M && k < K ? *reinterpret_cast<const uint4*>({} + {} + row * aRow + k) : make_uint4(0, 0, 0, 0);",
         a.name, aBase);
    line("  }}");
    line("}};");
    line("auto fetchB = [&](i64 k0) {{");
    line("  for (int q = 0; q < 2; ++q) {{");
    line("    const int e = threadIdx.x + q * 256, c = e >> 2, kq = (e & 3) * 8;");
    line("    const i64 col = n0 + c, k = k0 + kq;");
    line("    nextB[q] = col < N && k < K ? *reinterpret_cast<const uint4*>({} + {} + col * bCol + k) : make_uint4(0, 0, 0, 0);",
         b.name, bBase);
    line("  }}");
    line("}};");
    line("if (aVec) fetchA(0);");
    line("if (bVec) fetchB(0);");
    open("for (i64 k0 = 0; k0 < K; k0 += 32)");
    // A tile: 128 rows × 32 k.
    open("if (aVec)");
    line("for (int q = 0; q < 2; ++q) {{ const int e = threadIdx.x + q * 256; *reinterpret_cast<uint4*>(&As[e >> 2][(e & 3) * 8]) = nextA[q]; }}");
    close();
    open("else");
    open("for (int e = threadIdx.x; e < 128 * 32; e += 256)");
    line("const int r = e >> 5, kk = e & 31;");
    line("const i64 row = m0 + r, k = k0 + kk;");
    line("As[r][kk] = (row < M && k < K) ? {}[{} + row * aRow + k] : (unsigned short)0;", a.name, aBase);
    close();
    close();
    // B tile: 128 columns × 32 k.
    open("if (bVec)");
    line("for (int q = 0; q < 2; ++q) {{ const int e = threadIdx.x + q * 256; *reinterpret_cast<uint4*>(&Bs[e >> 2][(e & 3) * 8]) = nextB[q]; }}");
    close();
    open("else");
    open("for (int e = threadIdx.x; e < 128 * 32; e += 256)");
    if (d.bKContiguous) line("const int c = e >> 5, kk = e & 31;");
    else line("const int c = e & 127, kk = e >> 7;  // consecutive threads read consecutive columns");
    line("const i64 col = n0 + c, k = k0 + kk;");
    line("Bs[c][kk] = (col < N && k < K) ? {}[{} + col * bCol + k * bK] : (unsigned short)0;", b.name, bBase);
    close();
    close();
    line("__syncthreads();");
    open("if (k0 + 32 < K)");
    line("if (aVec) fetchA(k0 + 32);");
    line("if (bVec) fetchB(k0 + 32);");
    close();
    line("#pragma unroll");
    open("for (int ks = 0; ks < 32; ks += 16)");
    line("unsigned fa[4][4], fb[4][2];");
    line("#pragma unroll");
    open("for (int i = 0; i < 4; ++i)");
    line("const int r = wm + i * 16 + g;");
    line("fa[i][0] = *reinterpret_cast<const unsigned*>(&As[r][ks + 2 * t]);");
    line("fa[i][1] = *reinterpret_cast<const unsigned*>(&As[r + 8][ks + 2 * t]);");
    line("fa[i][2] = *reinterpret_cast<const unsigned*>(&As[r][ks + 2 * t + 8]);");
    line("fa[i][3] = *reinterpret_cast<const unsigned*>(&As[r + 8][ks + 2 * t + 8]);");
    line("const int c = wn + i * 8 + g;");
    line("fb[i][0] = *reinterpret_cast<const unsigned*>(&Bs[c][ks + 2 * t]);");
    line("fb[i][1] = *reinterpret_cast<const unsigned*>(&Bs[c][ks + 2 * t + 8]);");
    close();
    line("#pragma unroll");
    line("for (int i = 0; i < 4; ++i)");
    line("  for (int j = 0; j < 4; ++j) {}(acc[i][j], fa[i], fb[j]);", mma);
    close();
    line("__syncthreads();");
    close();
    // The epilogue, from the accumulator registers.
    line("#pragma unroll");
    open("for (int i = 0; i < 4; ++i)");
    line("#pragma unroll");
    open("for (int j = 0; j < 4; ++j)");
    line("#pragma unroll");
    open("for (int c = 0; c < 4; ++c)");
    line("const i64 row = m0 + wm + i * 16 + g + (c >> 1) * 8, col = n0 + wn + j * 8 + 2 * t + (c & 1);");
    epilogue(d, "row", "col", "acc[i][j][c]");
    close();
    close();
    close();
    close();
    close();
    close();
    close();
  }

  const Kernel& k_;
  CudaKernel& info_;
  std::unordered_map<std::string, std::string> symbolName_;
  std::vector<std::string> vars_;
  std::vector<std::string> lines_;
  int indent_ = 0;
  int temps_ = 0;
  std::vector<std::unordered_map<const Expr*, std::string>> scopes_{1};
  std::unordered_map<const Expr*, std::string> overrides_;  // row values, vector lanes
  std::string accumulator_;
  std::vector<std::pair<const Expr*, std::string>> rowCache_;  // see planRowCache
  int64_t rowChunks_ = 0;
  int rowThreads_ = 0;
};

}  // namespace

Strategy chooseStrategy(const Kernel& k) {
  if (k.gemm) {
    const ir::DType t = k.inputs[static_cast<size_t>(k.gemm->a)].type.dtype;
    return t == DType::F16 || t == DType::BF16 ? Strategy::GemmTensorCore : Strategy::GemmSimt;
  }
  if (k.kind == "reduction") {
    const int64_t row = staticExtent(k.reduceSizes);
    return row >= 0 && row <= kWarpRowMax ? Strategy::WarpPerRow : Strategy::BlockPerRow;
  }
  return Strategy::Pointwise;
}

CudaModule emitModule(const std::vector<const Kernel*>& kernels, const EmitOptions& options) {
  CudaModule m;
  m.source = fmt::format("// graphc: {} kernel{}\n", kernels.size(), kernels.size() == 1 ? "" : "s");
  m.source += kPreamble;
  for (const Kernel* k : kernels) {
    CudaKernel info;
    info.name = k->name;
    info.strategy = chooseStrategy(*k);
    if (info.strategy == Strategy::WarpPerRow) info.rowsPerBlock = info.blockThreads / 32;
    if (info.strategy == Strategy::GemmSimt || info.strategy == Strategy::GemmTensorCore) info.tileM = info.tileN = 128;
    m.source += "\n" + KernelWriter(*k, info).run();
    m.kernels.push_back(std::move(info));
  }
  if (options.conditions) {
    m.hasConditions = true;
    m.source += fmt::format(R"(
// cond under capture: sets the conditional node's value on the device.
extern "C" __device__ __attribute__((cudart_builtin)) void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void {}(cudaGraphConditionalHandle handle, const unsigned char* predicate) {{
  cudaGraphSetConditional(handle, *predicate != 0 ? 1u : 0u);
}}
)",
                            kSetConditionKernel);
  }
  if (options.transpose) {
    m.hasTranspose = true;
    for (const char* t : {"f32", "f64"})
      m.source += fmt::format(R"(
// eigh: cuSOLVER's column-major eigenvectors to row-major, in place; the
// thread of (i, j) with i < j swaps the pair.
extern "C" __global__ void {0}{1}({2}* m, const i64 n, const i64 batch) {{
  const i64 total = n * n * batch;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {{
    const i64 b = e / (n * n), i = (e / n) % n, j = e % n;
    if (i < j) {{
      {2}* base = m + b * n * n;
      const {2} x = base[i * n + j];
      base[i * n + j] = base[j * n + i];
      base[j * n + i] = x;
    }}
  }}
}}
)",
                              kTransposeKernelPrefix, t, std::string(t) == "f32" ? "float" : "double");
    for (const char* t : {"f32", "f64"})
      m.source += fmt::format(R"(
// eigh: flags each matrix with a NaN or Inf in the triangle the solver read
// (row-major input; lower: i >= j), overwriting its info.
extern "C" __global__ void {0}{1}(const {2}* a, const i64 n, const i64 batch, const int lower, int* info) {{
  const i64 total = n * n * batch;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (i64)gridDim.x * blockDim.x) {{
    const i64 b = e / (n * n), i = (e / n) % n, j = e % n;
    if ((lower ? i >= j : i <= j) && !isfinite(a[e])) info[b] = {3};
  }}
}}
)",
                              kEighCheckKernelPrefix, t, std::string(t) == "f32" ? "float" : "double",
                              fmt::format("({} - 1)", kEighNonFiniteInfo + 1));
  }
  return m;
}

}  // namespace graphc::codegen::cuda
