// The emitter's pointwise expressions: ops, comparisons, conversions
// with the reference's rounding rules, and the math functions (libm and
// libmvec, an inline f32 exp).
#include <set>
#include <unordered_set>

#include <fmt/format.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/cpu/Emitter.h"
#include "codegen/kernel/Analysis.h"
#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cpu {

llvm::Value* Emitter::value(const ExprPtr& e) {
  if (auto it = rowValues_.find(e.get()); it != rowValues_.end()) return it->second;
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
    if (auto it = s->find(e.get()); it != s->end()) return it->second;
  llvm::Value* v = compute(*e);
  scopes_.back()[e.get()] = v;
  return v;
}

llvm::Value* Emitter::compute(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Load: {
      const Buffer& in = k_.inputs[static_cast<size_t>(e.buffer)];
      llvm::Value* base = inputs_[static_cast<size_t>(e.buffer)];
      if (in.mx) return loadMx(*in.mx, base, linearIndex(in.type, e.index));
      return loadElement(in.type.dtype, address(base, in.type, e.index));
    }
    case Expr::Kind::Const: return constant(e);
    case Expr::Kind::Acc: {
      if (!acc_) throw ir::Error("cpu codegen: a GEMM accumulator outside a matmul kernel");
      const bool f64 = e.dtype == DType::F64;
      llvm::Type* t = f64 ? b_.getDoubleTy() : b_.getFloatTy();
      llvm::Value* addr = b_.CreateInBoundsGEP(t, acc_, b_.CreateNSWSub(linear_, begin_));
      return roundTo(e.dtype, tagged(b_.CreateAlignedLoad(t, addr, llvm::Align(f64 ? 8 : 4))));
    }
    case Expr::Kind::Reduce: throw ir::Error("cpu codegen: a reduction read outside its row");
    case Expr::Kind::InBounds: {
      llvm::Value* inside = b_.getTrue();
      for (size_t k = 0; k < e.index.size(); ++k) {
        llvm::Value* i = index(e.index[k]);
        inside =
            b_.CreateAnd(inside, b_.CreateAnd(b_.CreateICmpSGE(i, c64(0)), b_.CreateICmpSLT(i, index(e.sizes[k]))));
      }
      return inside;
    }
    case Expr::Kind::IndexValue: {
      llvm::Value* i = index(e.index[0]);
      if (ir::isFloat(e.dtype)) return roundTo(e.dtype, b_.CreateSIToFP(i, computeType(e.dtype)));
      if (e.dtype == DType::Bool) return b_.CreateICmpNE(i, c64(0));
      return b_.CreateSExtOrTrunc(i, computeType(e.dtype));
    }
    case Expr::Kind::Select: return select(e);
    case Expr::Kind::Op: return op(e);
  }
  return nullptr;
}

llvm::Value* Emitter::constant(const Expr& e) {
  llvm::Type* t = computeType(e.dtype);
  if (ir::isFloat(e.dtype)) return llvm::ConstantFP::get(t, runtime::reference::roundTo(e.dtype, e.value));
  if (e.dtype == DType::Bool) return b_.getInt1(e.intValue != 0);
  return llvm::ConstantInt::get(t, static_cast<uint64_t>(e.intValue), true);
}

llvm::Value* Emitter::select(const Expr& e) {
  llvm::Value* i = index(e.index[0]);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "piece.merge", fn_);
  std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>> incoming;
  for (size_t k = 0; k < e.args.size(); ++k) {
    llvm::BasicBlock* arm = llvm::BasicBlock::Create(ctx_, "piece", fn_);
    llvm::BasicBlock* next = nullptr;
    if (k + 1 < e.args.size()) {
      next = llvm::BasicBlock::Create(ctx_, "piece.next", fn_);
      b_.CreateCondBr(b_.CreateICmpSLT(i, index(e.bounds[k])), arm, next);
    } else {
      b_.CreateBr(arm);
    }
    b_.SetInsertPoint(arm);
    scopes_.emplace_back();
    llvm::Value* v = value(e.args[k]);
    scopes_.pop_back();
    incoming.emplace_back(v, b_.GetInsertBlock());
    b_.CreateBr(merge);
    if (next) b_.SetInsertPoint(next);
  }
  b_.SetInsertPoint(merge);
  llvm::PHINode* phi = b_.CreatePHI(computeType(e.dtype), static_cast<unsigned>(incoming.size()));
  for (auto& [v, block] : incoming) phi->addIncoming(v, block);
  return phi;
}

llvm::Value* Emitter::libm(const char* f32Name, const char* f64Name, std::vector<llvm::Value*> args) {
  llvm::Type* t = args[0]->getType();
  const char* name = t->isDoubleTy() ? f64Name : f32Name;
  std::vector<llvm::Type*> params(args.size(), t);
  llvm::FunctionCallee callee = m_.getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
    f->setWillReturn();
  }
  llvm::CallInst* call = b_.CreateCall(callee, args);
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* Emitter::fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

llvm::Value* Emitter::power(const Expr& exponent, llvm::Value* x, llvm::Value* y) {
  // A constant small integer exponent (GELU's x³, a norm's x²) is
  // multiplications, which vectorise: pow is a libm call tens of times
  // dearer. x·x is what powf(x, 2) returns; x·x·x may differ from it in
  // the last place.
  if (exponent.kind == Expr::Kind::Const) {
    if (exponent.value == 1.0) return x;
    if (exponent.value == 2.0) return b_.CreateFMul(x, x);
    if (exponent.value == 3.0) return b_.CreateFMul(b_.CreateFMul(x, x), x);
    if (exponent.value == 4.0) {
      llvm::Value* square = b_.CreateFMul(x, x);
      return b_.CreateFMul(square, square);
    }
  }
  return libm("powf", "pow", {x, y});
}

llvm::Value* Emitter::expF32(llvm::Value* x) {
  llvm::Type* f = x->getType();
  llvm::Type* i32 = b_.getInt32Ty();
  // Below ln(FLT_MIN) the result is 0: an input there is clamped to it
  // and the result selected away, so that no intermediate is subnormal
  // (subnormal arithmetic costs ~100 cycles an operation on x86, and a
  // masked softmax feeds exp -3.4e38 for every masked score). Results
  // that would be subnormal (exp(x) < 1.2e-38) become 0.
  constexpr double kLowest = -87.33654475055310898657;  // ln(FLT_MIN)
  llvm::Value* clamped = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::minnum, b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, fconst(f, kLowest)),
      fconst(f, 176.0));
  llvm::Value* n =
      b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_.CreateFMul(clamped, fconst(f, 1.4426950408889634)));
  auto fma = [&](llvm::Value* a, llvm::Value* c, llvm::Value* d) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {a, c, d});
  };
  llvm::Value* r = fma(n, fconst(f, -0.693145751953125), clamped);  // ln2's high bits: n·hi is exact
  r = fma(n, fconst(f, -1.428606765330187e-06), r);
  const double coefficients[] = {1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0};
  llvm::Value* p = fconst(f, coefficients[0]);
  for (size_t k = 1; k < std::size(coefficients); ++k) p = fma(p, r, fconst(f, coefficients[k]));
  llvm::Value* ni = b_.CreateFPToSI(n, i32);
  llvm::Value* half = b_.CreateAShr(ni, 1);
  auto pow2 = [&](llvm::Value* e) { return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(e, b_.getInt32(127)), 23), f); };
  llvm::Value* result = b_.CreateFMul(b_.CreateFMul(p, pow2(half)), pow2(b_.CreateSub(ni, half)));
  result = b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(f, kLowest)), fconst(f, 0.0), result);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* Emitter::exp(llvm::Value* x) {
  return x->getType()->isFloatTy() && k_.kind == ir::KernelKind::Reduction ? expF32(x) : libm("expf", "exp", {x});
}

llvm::Value* Emitter::sigmoid(llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* e = exp(b_.CreateFNeg(x));
  return b_.CreateFDiv(fconst(t, 1.0), b_.CreateFAdd(fconst(t, 1.0), e));
}

llvm::Value* Emitter::floatUnary(const Expr& e, llvm::Value* x) {
  llvm::Type* t = x->getType();
  switch (e.op) {
    case OpId::Neg: return b_.CreateFNeg(x);
    case OpId::Abs: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case OpId::Exp: return exp(x);
    case OpId::Log: return libm("logf", "log", {x});
    case OpId::Sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case OpId::Rsqrt: return b_.CreateFDiv(fconst(t, 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    case OpId::Sin: return libm("sinf", "sin", {x});
    case OpId::Cos: return libm("cosf", "cos", {x});
    case OpId::Tanh: return libm("tanhf", "tanh", {x});
    case OpId::Sigmoid: return sigmoid(x);
    case OpId::Relu:  // NaN stays NaN, as torch.relu
      return b_.CreateSelect(b_.CreateFCmpOLE(x, fconst(t, 0.0)), fconst(t, 0.0), x);
    case OpId::Gelu: {
      const ir::Attribute* a = e.attrs.find("approximate");
      llvm::Value* half = b_.CreateFMul(fconst(t, 0.5), x);
      if (a && a->s == "tanh") {
        llvm::Value* cube = b_.CreateFMul(b_.CreateFMul(x, x), x);
        llvm::Value* inner =
            b_.CreateFMul(fconst(t, 0.7978845608028654), b_.CreateFAdd(x, b_.CreateFMul(fconst(t, 0.044715), cube)));
        return b_.CreateFMul(half, b_.CreateFAdd(fconst(t, 1.0), libm("tanhf", "tanh", {inner})));
      }
      llvm::Value* erf = libm("erff", "erf", {b_.CreateFMul(x, fconst(t, 0.7071067811865476))});
      return b_.CreateFMul(half, b_.CreateFAdd(fconst(t, 1.0), erf));
    }
    case OpId::Silu: return b_.CreateFMul(x, sigmoid(x));
    case OpId::Erf: return libm("erff", "erf", {x});
    case OpId::Reciprocal: return b_.CreateFDiv(fconst(t, 1.0), x);
    case OpId::Floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case OpId::Ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case OpId::Round: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);  // half to even, as torch.round
    case OpId::Trunc: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x);
    case OpId::Tan: return libm("tanf", "tan", {x});
    case OpId::Asin: return libm("asinf", "asin", {x});
    case OpId::Acos: return libm("acosf", "acos", {x});
    case OpId::Atan: return libm("atanf", "atan", {x});
    case OpId::Sinh: return libm("sinhf", "sinh", {x});
    case OpId::Cosh: return libm("coshf", "cosh", {x});
    case OpId::Asinh: return libm("asinhf", "asinh", {x});
    case OpId::Acosh: return libm("acoshf", "acosh", {x});
    case OpId::Atanh: return libm("atanhf", "atanh", {x});
    case OpId::Expm1: return libm("expm1f", "expm1", {x});
    case OpId::Log1p: return libm("log1pf", "log1p", {x});
    case OpId::Log2: return libm("log2f", "log2", {x});
    case OpId::Log10: return libm("log10f", "log10", {x});
    case OpId::Sign:  // 0 for ±0 and NaN, as torch.sign
      return b_.CreateFSub(b_.CreateUIToFP(b_.CreateFCmpOGT(x, fconst(t, 0.0)), t),
                           b_.CreateUIToFP(b_.CreateFCmpOLT(x, fconst(t, 0.0)), t));
    default: break;
  }
  throw ir::Error(fmt::format("cpu codegen: no float lowering for '{}'", ir::opInfo(e.op).name));
}

llvm::Value* Emitter::intUnary(const Expr& e, llvm::Value* x) {
  llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
  switch (e.op) {
    case OpId::Neg: return b_.CreateSub(zero, x);
    case OpId::Abs: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
    case OpId::Relu: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, zero);
    case OpId::Sign:
      return b_.CreateSub(b_.CreateZExt(b_.CreateICmpSGT(x, zero), x->getType()),
                          b_.CreateZExt(b_.CreateICmpSLT(x, zero), x->getType()));
    default: break;
  }
  throw ir::Error(fmt::format("cpu codegen: no integer lowering for '{}'", ir::opInfo(e.op).name));
}

llvm::Value* Emitter::floatDivision(OpId op, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  llvm::Value* zero = fconst(t, 0.0);
  llvm::Value* mod = b_.CreateFRem(a, b);  // C's fmod
  if (op == OpId::Fmod) return mod;
  // The remainder takes the divisor's sign: where it is nonzero and the
  // signs differ, add the divisor (and take one off the quotient).
  llvm::Value* fix =
      b_.CreateAnd(b_.CreateFCmpUNE(mod, zero), b_.CreateXor(b_.CreateFCmpOLT(b, zero), b_.CreateFCmpOLT(mod, zero)));
  if (op == OpId::Remainder) return b_.CreateSelect(fix, b_.CreateFAdd(mod, b), mod);
  llvm::Value* div = b_.CreateFDiv(b_.CreateFSub(a, mod), b);
  div = b_.CreateSelect(fix, b_.CreateFSub(div, fconst(t, 1.0)), div);
  llvm::Value* floored = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div);
  floored = b_.CreateSelect(b_.CreateFCmpOGT(b_.CreateFSub(div, floored), fconst(t, 0.5)),
                            b_.CreateFAdd(floored, fconst(t, 1.0)), floored);
  llvm::Value* signedZero = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, b_.CreateFDiv(a, b));
  floored = b_.CreateSelect(b_.CreateFCmpOEQ(div, zero), signedZero, floored);
  return b_.CreateSelect(b_.CreateFCmpOEQ(b, zero), b_.CreateFDiv(a, b), floored);
}

llvm::Value* Emitter::intDivision(OpId op, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* minusOne = llvm::ConstantInt::get(t, static_cast<uint64_t>(-1), true);
  // sdiv/srem by 0 or of the minimum by -1 are undefined: divide by 1
  // there and choose the result after (0 for a zero divisor, a wrapped
  // negation for -1).
  llvm::Value* byZero = b_.CreateICmpEQ(b, zero);
  llvm::Value* byMinusOne = b_.CreateICmpEQ(b, minusOne);
  llvm::Value* safe = b_.CreateSelect(b_.CreateOr(byZero, byMinusOne), llvm::ConstantInt::get(t, 1), b);
  llvm::Value* quotient = b_.CreateSelect(byMinusOne, b_.CreateSub(zero, a), b_.CreateSDiv(a, safe));
  llvm::Value* remainder = b_.CreateSelect(byMinusOne, zero, b_.CreateSRem(a, safe));
  llvm::Value* fix = b_.CreateAnd(b_.CreateICmpNE(remainder, zero),
                                  b_.CreateXor(b_.CreateICmpSLT(remainder, zero), b_.CreateICmpSLT(b, zero)));
  llvm::Value* r = op == OpId::Fmod ? remainder
                   : op == OpId::Remainder
                       ? b_.CreateSelect(fix, b_.CreateAdd(remainder, b), remainder)
                       : b_.CreateSelect(fix, b_.CreateSub(quotient, llvm::ConstantInt::get(t, 1)), quotient);
  return b_.CreateSelect(byZero, zero, r);
}

llvm::Value* Emitter::convert(llvm::Value* v, DType from, DType to) {
  llvm::Type* target = computeType(to);
  if (ir::isFloat(from)) {
    if (ir::isFloat(to)) return roundTo(to, b_.CreateFPCast(v, target));
    if (to == DType::Bool) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {target, v->getType()}, {v});
  }
  if (ir::isFloat(to)) {
    llvm::Value* f = from == DType::Bool ? b_.CreateUIToFP(v, target) : b_.CreateSIToFP(v, target);
    return roundTo(to, f);
  }
  if (to == DType::Bool) return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  return from == DType::Bool ? b_.CreateZExt(v, target) : b_.CreateSExtOrTrunc(v, target);
}

llvm::Value* Emitter::isNonZero(llvm::Value* v) {
  if (v->getType()->isFloatingPointTy()) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
  return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

llvm::Value* Emitter::compare(OpId op, llvm::Value* a, llvm::Value* c, bool isFloat) {
  if (op == OpId::LogicalAnd) return b_.CreateAnd(isNonZero(a), isNonZero(c));
  if (op == OpId::LogicalOr) return b_.CreateOr(isNonZero(a), isNonZero(c));
  using P = llvm::CmpInst::Predicate;
  P p;
  switch (op) {  // float != is true for NaN (une), every other float compare is ordered
    case OpId::Eq: p = isFloat ? P::FCMP_OEQ : P::ICMP_EQ; break;
    case OpId::Ne: p = isFloat ? P::FCMP_UNE : P::ICMP_NE; break;
    case OpId::Lt: p = isFloat ? P::FCMP_OLT : P::ICMP_SLT; break;
    case OpId::Le: p = isFloat ? P::FCMP_OLE : P::ICMP_SLE; break;
    case OpId::Gt: p = isFloat ? P::FCMP_OGT : P::ICMP_SGT; break;
    case OpId::Ge: p = isFloat ? P::FCMP_OGE : P::ICMP_SGE; break;
    default: throw ir::Error("cpu codegen: not a comparison");
  }
  if (!isFloat && a->getType()->isIntegerTy(1)) {  // bools compare as 0/1
    a = b_.CreateZExt(a, b_.getInt8Ty());
    c = b_.CreateZExt(c, b_.getInt8Ty());
  }
  return b_.CreateCmp(p, a, c);
}

llvm::Value* Emitter::op(const Expr& e) {
  std::vector<llvm::Value*> args;
  for (const ExprPtr& a : e.args) args.push_back(value(a));
  const DType argType = e.args.empty() ? e.dtype : e.args[e.op == OpId::Where ? 1 : 0]->dtype;
  const bool isFloat = ir::isFloat(argType);
  const ir::OpInfo& info = ir::opInfo(e.op);
  llvm::Value* r = nullptr;
  switch (e.op) {
    case OpId::Cast: return convert(args[0], e.args[0]->dtype, e.dtype);
    case OpId::LogicalNot: return b_.CreateNot(isNonZero(args[0]));
    case OpId::Where: return b_.CreateSelect(args[0], args[1], args[2]);
    case OpId::Clamp: {
      r = args[0];
      const ir::Attribute* lo = e.attrs.find("min");
      const ir::Attribute* hi = e.attrs.find("max");
      if (isFloat) {  // min first, then max; NaN stays NaN (torch.clamp)
        if (lo) r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, r, fconst(r->getType(), lo->asDouble()));
        if (hi) r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, r, fconst(r->getType(), hi->asDouble()));
        return roundTo(e.dtype, r);
      }
      // An integer bound outside the dtype's range still clamps (in i64).
      llvm::Value* wide = b_.CreateSExt(r, i64());
      if (lo) wide = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, wide, c64(lo->i));
      if (hi) wide = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, wide, c64(hi->i));
      return b_.CreateTrunc(wide, r->getType());
    }
    default: break;
  }
  if (info.category == ir::OpCategory::Unary) {
    r = isFloat ? floatUnary(e, args[0]) : intUnary(e, args[0]);
    return isFloat ? roundTo(e.dtype, r) : r;
  }
  if (e.dtype == DType::Bool) return compare(e.op, args[0], args[1], isFloat);
  if (isFloat) {
    switch (e.op) {
      case OpId::Add: r = b_.CreateFAdd(args[0], args[1]); break;
      case OpId::Sub: r = b_.CreateFSub(args[0], args[1]); break;
      case OpId::Mul: r = b_.CreateFMul(args[0], args[1]); break;
      case OpId::Div: r = b_.CreateFDiv(args[0], args[1]); break;
      case OpId::Pow: r = power(*e.args[1], args[0], args[1]); break;
      case OpId::Maximum: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, args[0], args[1]); break;
      case OpId::Minimum: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, args[0], args[1]); break;
      case OpId::Atan2: r = libm("atan2f", "atan2", {args[0], args[1]}); break;
      case OpId::Fmod:
      case OpId::Remainder:
      case OpId::FloorDivide: r = floatDivision(e.op, args[0], args[1]); break;
      default: throw ir::Error(fmt::format("cpu codegen: no float lowering for '{}'", info.name));
    }
    return roundTo(e.dtype, r);
  }
  switch (e.op) {  // integers wrap in their own width
    case OpId::Add: return b_.CreateAdd(args[0], args[1]);
    case OpId::Sub: return b_.CreateSub(args[0], args[1]);
    case OpId::Mul: return b_.CreateMul(args[0], args[1]);
    case OpId::Maximum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, args[0], args[1]);
    case OpId::Minimum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, args[0], args[1]);
    case OpId::Fmod:
    case OpId::Remainder:
    case OpId::FloorDivide: return intDivision(e.op, args[0], args[1]);
    default: break;
  }
  throw ir::Error(fmt::format("cpu codegen: no integer lowering for '{}'", info.name));
}

}  // namespace graphc::codegen::cpu
