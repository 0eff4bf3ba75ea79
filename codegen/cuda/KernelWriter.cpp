// The kernel writer's shared machinery: text and scopes, index
// expressions, the expression DAG as const temporaries, and stores.
#include "codegen/cuda/KernelWriter.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "codegen/cuda/Preamble.h"
#include "codegen/cuda/Syntax.h"
#include "codegen/kernel/Analysis.h"
#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cuda {

using ir::OpId;

KernelWriter::KernelWriter(const Kernel& k, CudaKernel& info) : k_(k), info_(info) {
  const std::vector<std::string> symbols = symbolsOf(k);
  for (size_t s = 0; s < symbols.size(); ++s) symbolName_[symbols[s]] = fmt::format("s{}", s);
  info_.symbols = symbols;
  vars_.assign(k.outer.size() + k.reduceSizes.size() + 1, "");
}

std::string KernelWriter::run() {
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

void KernelWriter::open(const std::string& head) {
  lines_.push_back(std::string(static_cast<size_t>(indent_) * 2, ' ') + head + " {");
  ++indent_;
  scopes_.emplace_back();
}

void KernelWriter::close() {
  scopes_.pop_back();
  --indent_;
  line("}}");
}

std::string KernelWriter::fresh() { return fmt::format("v{}", temps_++); }

void KernelWriter::signature(const std::vector<std::string>& extents) {
  std::string params;
  auto add = [&](const std::string& p) { params += (params.empty() ? "" : ", ") + p; };
  for (const Buffer& b : k_.inputs) {
    // An MX weight: its packed elements, then its scales (codegen/MxOperands.h).
    add(fmt::format("const {}* {}", b.mx ? "unsigned char" : storageType(b.type.dtype), b.name));
  }
  for (const Buffer& b : k_.outputs) add(fmt::format("{}* {}", storageType(b.type.dtype), b.name));
  for (size_t s = 0; s < info_.symbols.size(); ++s) add(fmt::format("const i64 s{}", s));
  for (const std::string& e : extents) add("const i64 " + e);
  line("// {} ({}): {}", k_.name, ir::kernelKindName(k_.kind), strategyName(info_.strategy));
  open(fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({})", info_.blockThreads, k_.name, params));
}

std::string KernelWriter::dim(const ir::Dim& d) {
  // A symbolic dim: its factor (when not 1) times each symbol.
  std::vector<std::string> factors;
  if (d.isStatic() || d.size != 1) factors.push_back(fmt::format("{}ll", d.size));
  for (const std::string& f : d.factors()) factors.push_back(symbolName_.at(f));
  return factors.size() == 1 ? factors[0] : fmt::format("({})", fmt::join(factors, " * "));
}

std::string KernelWriter::index(const IndexPtr& e) {
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
    case Index::Kind::Clamp: return fmt::format("gc::clamp_index({}, {})", index(e->lhs), index(e->rhs));
  }
  return "?";
}

std::string KernelWriter::offset(const ir::TensorType& t, const std::vector<IndexPtr>& idx) {
  std::string linear;
  for (size_t d = 0; d < idx.size(); ++d)
    linear = d == 0 ? index(idx[d]) : fmt::format("({} * {} + {})", linear, dim(t.shape[d]), index(idx[d]));
  return linear.empty() ? "0" : linear;
}

void KernelWriter::unravel(const std::string& linear, const std::vector<ir::Dim>& dims, size_t first,
                           const std::string& prefix) {
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

std::string KernelWriter::product(const std::vector<ir::Dim>& dims) {
  std::string p;
  for (const ir::Dim& d : dims) p += (p.empty() ? "" : " * ") + dim(d);
  return p.empty() ? "1ll" : p;
}

std::string KernelWriter::value(const ExprPtr& e) {
  if (auto it = overrides_.find(e.get()); it != overrides_.end()) return it->second;
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
    if (auto it = s->find(e.get()); it != s->end()) return it->second;
  std::string v = compute(*e);
  scopes_.back()[e.get()] = v;
  return v;
}

std::string KernelWriter::define(DType t, const std::string& expr) {
  const std::string name = fresh();
  line("const {} {} = {};", computeType(t), name, expr);
  return name;
}

std::string KernelWriter::compute(const Expr& e) {
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
    case Expr::Kind::InBounds: {
      std::vector<std::string> terms;
      for (size_t k = 0; k < e.index.size(); ++k)
        terms.push_back(fmt::format("gc::in_bounds({}, {})", index(e.index[k]), index(e.sizes[k])));
      return define(DType::Bool, fmt::format("{}", fmt::join(terms, " && ")));
    }
    case Expr::Kind::IndexValue: return define(e.dtype, convert(index(e.index[0]), DType::I64, e.dtype));
    case Expr::Kind::Select: return select(e);
    case Expr::Kind::Op: return define(e.dtype, op(e));
  }
  return "?";
}

std::string KernelWriter::select(const Expr& e) {
  const std::string result = fresh();
  const std::string i = index(e.index[0]);
  line("{} {};", computeType(e.dtype), result);
  for (size_t k = 0; k < e.args.size(); ++k) {
    const bool last = k + 1 == e.args.size();
    const std::string head = k == 0 ? fmt::format("if ({} < {})", i, index(e.bounds[k]))
                             : last ? std::string("else")
                                    : fmt::format("else if ({} < {})", i, index(e.bounds[k]));
    open(head);
    line("{} = {};", result, value(e.args[k]));
    close();
  }
  return result;
}

std::string KernelWriter::mathFn(const char* name, bool f64) {
  return f64 ? std::string(name) : std::string(name) + "f";
}

std::string KernelWriter::floatUnary(const Expr& e, const std::string& x, bool f64) {
  const std::string one = f64 ? "1.0" : "1.0f", zero = f64 ? "0.0" : "0.0f", half = f64 ? "0.5" : "0.5f";
  auto sigmoid = [&](const std::string& v) {
    return fmt::format("({} / ({} + {}(-{})))", one, one, mathFn("exp", f64), v);
  };
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
    case OpId::Floor: return mathFn("floor", f64) + "(" + x + ")";
    case OpId::Ceil: return mathFn("ceil", f64) + "(" + x + ")";
    case OpId::Round: return mathFn("rint", f64) + "(" + x + ")";  // half to even, as torch.round
    case OpId::Trunc: return mathFn("trunc", f64) + "(" + x + ")";
    case OpId::Tan: return mathFn("tan", f64) + "(" + x + ")";
    case OpId::Asin: return mathFn("asin", f64) + "(" + x + ")";
    case OpId::Acos: return mathFn("acos", f64) + "(" + x + ")";
    case OpId::Atan: return mathFn("atan", f64) + "(" + x + ")";
    case OpId::Sinh: return mathFn("sinh", f64) + "(" + x + ")";
    case OpId::Cosh: return mathFn("cosh", f64) + "(" + x + ")";
    case OpId::Asinh: return mathFn("asinh", f64) + "(" + x + ")";
    case OpId::Acosh: return mathFn("acosh", f64) + "(" + x + ")";
    case OpId::Atanh: return mathFn("atanh", f64) + "(" + x + ")";
    case OpId::Expm1: return mathFn("expm1", f64) + "(" + x + ")";
    case OpId::Log1p: return mathFn("log1p", f64) + "(" + x + ")";
    case OpId::Log2: return mathFn("log2", f64) + "(" + x + ")";
    case OpId::Log10: return mathFn("log10", f64) + "(" + x + ")";
    case OpId::Sign:  // 0 for ±0 and NaN, as torch.sign
      return fmt::format("(({0} > {1}) - ({0} < {1}) + {1})", x, zero);
    case OpId::Relu: return fmt::format("({0} <= {1} ? {1} : {0})", x, zero);  // NaN stays NaN, as torch.relu
    case OpId::Gelu: {
      const ir::Attribute* a = e.attrs.find("approximate");
      if (a && a->s == "tanh")
        return fmt::format("({h} * {x} * ({o} + {t}({c} * ({x} + {k} * {x} * {x} * {x}))))", fmt::arg("h", half),
                           fmt::arg("x", x), fmt::arg("o", one), fmt::arg("t", mathFn("tanh", f64)),
                           fmt::arg("c", f64 ? "0.7978845608028654" : "0.7978845608028654f"),
                           fmt::arg("k", f64 ? "0.044715" : "0.044715f"));
      return fmt::format("({h} * {x} * ({o} + {e}({x} * {r})))", fmt::arg("h", half), fmt::arg("x", x),
                         fmt::arg("o", one), fmt::arg("e", mathFn("erf", f64)),
                         fmt::arg("r", f64 ? "0.7071067811865476" : "0.7071067811865476f"));
    }
    default: break;
  }
  throw ir::Error(fmt::format("cuda codegen: no float lowering for '{}'", ir::opInfo(e.op).name));
}

std::string KernelWriter::wrapped(DType t, const std::string& a, const char* op, const std::string& b) {
  if (t == DType::I8) return fmt::format("(signed char)({} {} {})", a, op, b);
  const char* u = t == DType::I64 ? "u64" : "unsigned";
  return fmt::format("({})(({}){} {} ({}){})", computeType(t), u, a, op, u, b);
}

std::string KernelWriter::intUnary(const Expr& e, const std::string& x, DType t) {
  switch (e.op) {
    case OpId::Neg: return wrapped(t, literal(t, 0), "-", x);
    case OpId::Abs: return fmt::format("({} < 0 ? {} : {})", x, wrapped(t, literal(t, 0), "-", x), x);
    case OpId::Relu: return fmt::format("({0} < 0 ? {1} : {0})", x, literal(t, 0));
    case OpId::Sign: return fmt::format("({0})(({1} > 0) - ({1} < 0))", computeType(t), x);
    default: break;
  }
  throw ir::Error(fmt::format("cuda codegen: no integer lowering for '{}'", ir::opInfo(e.op).name));
}

std::string KernelWriter::nonZero(const std::string& v, DType t) {
  return t == DType::Bool ? v : fmt::format("({} != 0)", v);
}

std::string KernelWriter::convert(const std::string& v, DType from, DType to) {
  if (ir::isFloat(from)) {
    if (ir::isFloat(to)) return rounded(to, fmt::format("({})({})", computeType(to), v));
    if (to == DType::Bool) return fmt::format("({} != 0)", v);
    if (to == DType::I64) return fmt::format("gc::float_to_i64((double)({}))", v);
    const bool i8 = to == DType::I8;
    return fmt::format("gc::float_to_int<{}>((double)({}), {}, {})", computeType(to), v,
                       i8 ? "-128.0" : "-2147483648.0", i8 ? "127.0" : "2147483647.0");
  }
  if (ir::isFloat(to)) return rounded(to, fmt::format("({})({})", computeType(to), v));
  if (to == DType::Bool) return nonZero(v, from);
  return fmt::format("({})({})", computeType(to), v);
}

std::string KernelWriter::op(const Expr& e) {
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
      case OpId::Atan2: r = fmt::format("{}({}, {})", mathFn("atan2", f64), args[0], args[1]); break;
      case OpId::Fmod: r = fmt::format("{}({}, {})", mathFn("fmod", f64), args[0], args[1]); break;
      case OpId::Remainder:
        r = fmt::format("gc::float_remainder<{}>({}, {})", f64 ? "double" : "float", args[0], args[1]);
        break;
      case OpId::FloorDivide:
        r = fmt::format("gc::float_floor_divide<{}>({}, {})", f64 ? "double" : "float", args[0], args[1]);
        break;
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
    case OpId::Fmod: return fmt::format("gc::int_fmod<{}>({}, {})", computeType(e.dtype), args[0], args[1]);
    case OpId::Remainder: return fmt::format("gc::int_remainder<{}>({}, {})", computeType(e.dtype), args[0], args[1]);
    case OpId::FloorDivide:
      return fmt::format("gc::int_floor_divide<{}>({}, {})", computeType(e.dtype), args[0], args[1]);
    default: break;
  }
  throw ir::Error(fmt::format("cuda codegen: no integer lowering for '{}'", info.name));
}

void KernelWriter::stores(bool insideReduction, const std::string& guard) {
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

}  // namespace graphc::codegen::cuda
