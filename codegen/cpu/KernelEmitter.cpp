#include "codegen/cpu/KernelEmitter.h"

#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include "ir/Diagnostics.h"
#include "runtime/ReferenceOps.h"

namespace graphc::codegen::cpu {

using namespace ir::kernel;
using ir::DType;
using ir::OpId;

KernelSignature signatureOf(const Kernel& k) { return {symbolsOf(k)}; }

namespace {

class Emitter {
 public:
  Emitter(const Kernel& k, const std::string& name, llvm::Module& m)
      : k_(k), m_(m), ctx_(m.getContext()), b_(ctx_), signature_(signatureOf(k)) {
    llvm::Type* ptr = b_.getPtrTy();
    std::vector<llvm::Type*> params = {ptr, ptr, i64(), i64()};
    if (k.gemm) params.push_back(ptr);
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, m);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addFnAttr(llvm::Attribute::NoFree);
    fn_->addFnAttr(llvm::Attribute::NoSync);
    fn_->addFnAttr(llvm::Attribute::WillReturn);
    for (unsigned a = 0; a < fn_->arg_size(); ++a)
      if (fn_->getArg(a)->getType()->isPointerTy()) fn_->addParamAttr(a, llvm::Attribute::NoCapture);
  }

  llvm::Function* emit() {
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    accessGroup_ = llvm::MDNode::getDistinct(ctx_, {});
    b_.SetInsertPoint(entry_);
    loadArguments();
    vars_.assign(k_.outer.size() + k_.reduceSizes.size() + 1, nullptr);
    scopes_.emplace_back();
    if (k_.kind == "reduction") emitReductionKernel();
    else emitElementwiseKernel();
    b_.CreateRetVoid();
    return fn_;
  }

 private:
  // ---- types and arguments -------------------------------------------------

  llvm::Type* i64() { return b_.getInt64Ty(); }
  llvm::Value* c64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  /// The type a value of `t` is computed in: f16/bf16 in f32, bool as i1.
  llvm::Type* computeType(DType t) {
    switch (t) {
      case DType::F16:
      case DType::BF16:
      case DType::F32: return b_.getFloatTy();
      case DType::F64: return b_.getDoubleTy();
      case DType::I8: return b_.getInt8Ty();
      case DType::I32: return b_.getInt32Ty();
      case DType::I64: return b_.getInt64Ty();
      case DType::Bool: return b_.getInt1Ty();
    }
    return nullptr;
  }

  llvm::Type* storageType(DType t) {
    switch (t) {
      case DType::F16: return b_.getHalfTy();
      case DType::BF16: return b_.getInt16Ty();
      case DType::Bool: return b_.getInt8Ty();
      default: return computeType(t);
    }
  }

  void loadArguments() {
    llvm::Value* buffers = fn_->getArg(0);
    llvm::Value* sizes = fn_->getArg(1);
    begin_ = fn_->getArg(2);
    end_ = fn_->getArg(3);
    if (k_.gemm) acc_ = fn_->getArg(4);
    const size_t count = k_.inputs.size() + k_.outputs.size();
    for (size_t i = 0; i < count; ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), buffers, i);
      llvm::Value* p = b_.CreateAlignedLoad(b_.getPtrTy(), slot, llvm::Align(8), fmt::format("buf{}", i));
      (i < k_.inputs.size() ? inputs_ : outputs_).push_back(p);
    }
    for (size_t s = 0; s < signature_.symbols.size(); ++s) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(i64(), sizes, s);
      sizes_[signature_.symbols[s]] = b_.CreateAlignedLoad(i64(), slot, llvm::Align(8), "size");
    }
  }

  llvm::Value* dim(const ir::Dim& d) { return d.isStatic() ? c64(d.size) : sizes_.at(d.symbol); }

  // ---- loops ---------------------------------------------------------------

  /// for (iv = from; iv < to; iv = body(iv)): the body returns the next
  /// value of iv. Returns the latch branch (where loop metadata goes).
  llvm::BranchInst* whileLess(llvm::Value* from, llvm::Value* to, const std::function<llvm::Value*(llvm::Value*)>& body,
                              const char* name) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, name, fn_);
    llvm::BasicBlock* bodyBlock = llvm::BasicBlock::Create(ctx_, std::string(name) + ".body", fn_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(i64(), 2, name);
    iv->addIncoming(from, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, to), bodyBlock, exit);
    b_.SetInsertPoint(bodyBlock);
    scopes_.emplace_back();
    llvm::Value* next = body(iv);
    scopes_.pop_back();
    iv->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst* latch = b_.CreateBr(header);
    b_.SetInsertPoint(exit);
    return latch;
  }

  /// for (iv = from; iv < to; ++iv) body(iv). An innermost loop is marked
  /// parallel (llvm.loop.parallel_accesses): its iterations touch distinct
  /// elements of every buffer (the plan's buffers are disjoint, or, for an
  /// in-place kernel, the same element of input and output), and reduction
  /// accumulators live in registers; so the vectoriser needs no run-time
  /// alias checks, which in-place kernels would fail.
  void loop(llvm::Value* from, llvm::Value* to, const std::function<void(llvm::Value*)>& body) {
    const int loopsBefore = ++loopsMade_;
    llvm::BranchInst* latch = whileLess(from, to, [&](llvm::Value* iv) {
      body(iv);
      return b_.CreateNSWAdd(iv, c64(1));
    }, "i");
    if (loopsMade_ == loopsBefore) {  // no loop inside: innermost
      llvm::MDNode* parallel = llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"), accessGroup_});
      llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, {nullptr, parallel});
      id->replaceOperandWith(0, id);
      latch->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
  }

  /// Tags a buffer access as one of the kernel's parallel accesses.
  template <typename I>
  I* tagged(I* access) {
    access->setMetadata(llvm::LLVMContext::MD_access_group, accessGroup_);
    return access;
  }

  /// Loops over every point of `dims`, binding vars_[first...].
  void nest(const std::vector<ir::Dim>& dims, size_t first, const std::function<void()>& body, size_t d = 0) {
    if (d == dims.size()) {
      body();
      return;
    }
    loop(c64(0), dim(dims[d]), [&](llvm::Value* iv) {
      vars_[first + d] = iv;
      nest(dims, first, body, d + 1);
    });
  }

  /// Binds vars_[0..rank) to the multi-index of the flattened outer point `linear`.
  void unravelOuter(llvm::Value* linear) {
    llvm::Value* rest = linear;
    for (size_t d = k_.outer.size(); d-- > 0;) {
      if (d == 0) {
        vars_[0] = rest;
      } else {
        vars_[d] = b_.CreateURem(rest, dim(k_.outer[d]));
        rest = b_.CreateUDiv(rest, dim(k_.outer[d]));
      }
    }
  }

  // ---- kernels -------------------------------------------------------------

  /// Pointwise and matmul-epilogue kernels: [begin, end) of the flattened
  /// outer space, walked as runs along the last dim so that the innermost
  /// loop is a unit-stride counted loop.
  void emitElementwiseKernel() {
    const size_t rank = k_.outer.size();
    if (rank == 0) {  // a single point
      llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "point", fn_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
      b_.CreateCondBr(b_.CreateICmpSLT(begin_, end_), body, done);
      b_.SetInsertPoint(body);
      linear_ = c64(0);
      emitStores(false);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      return;
    }
    llvm::Value* last = dim(k_.outer.back());
    whileLess(begin_, end_, [&](llvm::Value* lin) {
      unravelOuter(lin);
      llvm::Value* first = vars_[rank - 1];
      llvm::Value* runStart = b_.CreateNSWSub(lin, first);
      llvm::Value* runEnd = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end_, b_.CreateNSWAdd(runStart, last));
      loop(first, b_.CreateNSWSub(runEnd, runStart), [&](llvm::Value* j) {
        vars_[rank - 1] = j;
        linear_ = b_.CreateNSWAdd(runStart, j);
        emitStores(false);
      });
      return runEnd;
    }, "run");
  }

  /// Row reductions: for each outer point of [begin, end), the row values
  /// (the Reduce expressions, dependencies first), then the per-row stores,
  /// then a loop over the row's elements for the per-element stores.
  void emitReductionKernel() {
    const size_t rank = k_.outer.size();
    std::vector<const Expr*> order;  // the Reduce expressions, dependencies first
    std::unordered_set<const Expr*> seen;
    for (const Store& s : k_.stores) collectReduces(s.value.get(), order, seen);
    planRowScratch(order);
    loop(begin_, end_, [&](llvm::Value* lin) {
      unravelOuter(lin);
      rowValues_.clear();
      for (const Expr* e : order) rowValues_[e] = emitReduce(*e);
      emitStores(false);
      if (std::any_of(k_.stores.begin(), k_.stores.end(), [](const Store& s) { return s.insideReduction; }))
        nest(k_.reduceSizes, rank, [&] {
          // Element values a reduction already computed come from its row scratch.
          for (auto& [expr, buffer] : rowScratch_) {
            auto* load = tagged(b_.CreateLoad(computeType(expr->dtype), b_.CreateInBoundsGEP(computeType(expr->dtype), buffer, innerLinear())));
            scopes_.back()[expr] = load;
          }
          emitStores(true);
        });
    });
  }

  /// Softmax's exp(x - max) is needed by its sum and again by each output
  /// element. Rather than compute it twice, the reduction loop keeps each
  /// element's value in a row buffer on the stack (L1-resident) that the
  /// per-element loop reads: for a reduction argument that an inside store
  /// also uses, over a static row of at most 64 KiB.
  void planRowScratch(const std::vector<const Expr*>& reduces) {
    int64_t row = 1;
    for (const ir::Dim& d : k_.reduceSizes) {
      if (!d.isStatic()) return;
      row *= d.size;
    }
    if (row == 0 || row * 8 > 64 * 1024) return;
    std::unordered_set<const Expr*> usedByStores, seen;
    for (const Store& s : k_.stores)
      if (s.insideReduction) collectOperands(s.value.get(), usedByStores, seen);
    llvm::IRBuilder<> entryBuilder(entry_, entry_->begin());
    for (const Expr* r : reduces) {
      const Expr* arg = r->args[0].get();
      if (arg->kind != Expr::Kind::Op || !usedByStores.count(arg) || rowScratch_.count(arg)) continue;
      rowScratch_[arg] = entryBuilder.CreateAlloca(computeType(arg->dtype), c64(row), "row");
    }
  }

  /// The expressions a store reads at each element, reductions as leaves.
  void collectOperands(const Expr* e, std::unordered_set<const Expr*>& out, std::unordered_set<const Expr*>& seen) {
    if (!seen.insert(e).second) return;
    out.insert(e);
    if (e->kind == Expr::Kind::Reduce) return;
    for (const ExprPtr& a : e->args) collectOperands(a.get(), out, seen);
  }

  /// The flattened position of the current point within its row.
  llvm::Value* innerLinear() {
    llvm::Value* linear = c64(0);
    for (size_t d = 0; d < k_.reduceSizes.size(); ++d)
      linear = b_.CreateNSWAdd(b_.CreateNSWMul(linear, dim(k_.reduceSizes[d])), vars_[k_.outer.size() + d]);
    return linear;
  }

  void collectReduces(const Expr* e, std::vector<const Expr*>& order, std::unordered_set<const Expr*>& seen) {
    if (!seen.insert(e).second) return;
    for (const ExprPtr& a : e->args) collectReduces(a.get(), order, seen);
    if (e->kind == Expr::Kind::Reduce) order.push_back(e);
  }

  /// Computes every value first, then stores: an in-place kernel's output
  /// may be the buffer an input of the same point is read from.
  void emitStores(bool insideReduction) {
    std::vector<std::pair<const Store*, llvm::Value*>> values;
    for (const Store& s : k_.stores)
      if (s.insideReduction == insideReduction) values.emplace_back(&s, value(s.value));
    for (auto& [s, v] : values) {
      const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
      storeElement(out.type.dtype, address(outputs_[static_cast<size_t>(s->buffer)], out.type, s->index), v);
    }
  }

  // ---- indices and memory --------------------------------------------------

  llvm::Value* index(const IndexPtr& e) {
    switch (e->kind) {
      case Index::Kind::Const: return c64(e->value);
      case Index::Kind::Var: {
        llvm::Value* v = vars_.at(static_cast<size_t>(e->value));
        if (!v) throw ir::Error(fmt::format("cpu codegen: loop variable i{} is not bound here", e->value));
        return v;
      }
      case Index::Kind::Sym: return sizes_.at(e->symbol);
      case Index::Kind::Add: return b_.CreateNSWAdd(index(e->lhs), index(e->rhs));
      case Index::Kind::Mul: return b_.CreateNSWMul(index(e->lhs), index(e->rhs));
      case Index::Kind::Div: return b_.CreateUDiv(index(e->lhs), index(e->rhs));
      case Index::Kind::Mod: return b_.CreateURem(index(e->lhs), index(e->rhs));
      case Index::Kind::Indirect: {
        // wrapIndex: negative from the end, then clamped into [0, size).
        llvm::Value* size = index(e->rhs);
        llvm::Value* v = b_.CreateSExtOrTrunc(value(e->load), i64());
        v = b_.CreateSelect(b_.CreateICmpSLT(v, c64(0)), b_.CreateAdd(v, size), v);
        v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v, c64(0));
        return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v, b_.CreateSub(size, c64(1)));
      }
    }
    return nullptr;
  }

  llvm::Value* address(llvm::Value* base, const ir::TensorType& t, const std::vector<IndexPtr>& idx) {
    llvm::Value* linear = c64(0);
    for (size_t d = 0; d < idx.size(); ++d) linear = b_.CreateNSWAdd(b_.CreateNSWMul(linear, dim(t.shape[d])), index(idx[d]));
    return b_.CreateInBoundsGEP(storageType(t.dtype), base, linear);
  }

  llvm::Value* loadElement(DType t, llvm::Value* addr) {
    llvm::Type* st = storageType(t);
    llvm::Value* raw = tagged(b_.CreateAlignedLoad(st, addr, llvm::Align(ir::dtypeSize(t))));
    switch (t) {
      case DType::F16: return b_.CreateFPExt(raw, b_.getFloatTy());
      case DType::BF16: return bf16ToFloat(raw);
      case DType::Bool: return b_.CreateICmpNE(raw, b_.getInt8(0));
      default: return raw;
    }
  }

  void storeElement(DType t, llvm::Value* addr, llvm::Value* v) {
    llvm::Value* raw = v;
    switch (t) {
      case DType::F16: raw = b_.CreateFPTrunc(v, b_.getHalfTy()); break;
      case DType::BF16: raw = floatToBf16Bits(v); break;
      case DType::Bool: raw = b_.CreateZExt(v, b_.getInt8Ty()); break;
      default: break;
    }
    tagged(b_.CreateAlignedStore(raw, addr, llvm::Align(ir::dtypeSize(t))));
  }

  llvm::Value* bf16ToFloat(llvm::Value* bits16) {
    llvm::Value* wide = b_.CreateShl(b_.CreateZExt(bits16, b_.getInt32Ty()), 16);
    return b_.CreateBitCast(wide, b_.getFloatTy());
  }

  /// Round to nearest even, NaN kept quiet (runtime/Half.h's floatToBf16).
  llvm::Value* floatToBf16Bits(llvm::Value* f) {
    llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
    llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
    llvm::Value* quiet = b_.CreateOr(b_.CreateLShr(bits, 16), b_.getInt32(0x40));
    llvm::Value* r = b_.CreateSelect(b_.CreateFCmpUNO(f, f), quiet, rounded);
    return b_.CreateTrunc(r, b_.getInt16Ty());
  }

  /// A computed value rounded to what its dtype holds.
  llvm::Value* roundTo(DType t, llvm::Value* v) {
    if (t == DType::F16) return b_.CreateFPExt(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getFloatTy());
    if (t == DType::BF16) return bf16ToFloat(floatToBf16Bits(v));
    return v;
  }

  // ---- expressions ---------------------------------------------------------

  llvm::Value* value(const ExprPtr& e) {
    if (auto it = rowValues_.find(e.get()); it != rowValues_.end()) return it->second;
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->find(e.get()); it != s->end()) return it->second;
    llvm::Value* v = compute(*e);
    scopes_.back()[e.get()] = v;
    return v;
  }

  llvm::Value* compute(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Load: {
        const Buffer& in = k_.inputs[static_cast<size_t>(e.buffer)];
        return loadElement(in.type.dtype, address(inputs_[static_cast<size_t>(e.buffer)], in.type, e.index));
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
      case Expr::Kind::Select: return select(e);
      case Expr::Kind::Op: return op(e);
    }
    return nullptr;
  }

  /// A Const, exact: a float rounded to its dtype, an integer that never
  /// passes through a double.
  llvm::Value* constant(const Expr& e) {
    llvm::Type* t = computeType(e.dtype);
    if (ir::isFloat(e.dtype)) return llvm::ConstantFP::get(t, runtime::reference::roundTo(e.dtype, e.value));
    if (e.dtype == DType::Bool) return b_.getInt1(e.intValue != 0);
    return llvm::ConstantInt::get(t, static_cast<uint64_t>(e.intValue), true);
  }

  /// concat's piecewise read, as branches: a piece's index map is only in
  /// bounds inside its own range.
  llvm::Value* select(const Expr& e) {
    llvm::Value* i = index(e.index[0]);
    llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "piece.merge", fn_);
    std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>> incoming;
    for (size_t k = 0; k < e.args.size(); ++k) {
      llvm::BasicBlock* arm = llvm::BasicBlock::Create(ctx_, "piece", fn_);
      llvm::BasicBlock* next = nullptr;
      if (k + 1 < e.args.size()) {
        next = llvm::BasicBlock::Create(ctx_, "piece.next", fn_);
        b_.CreateCondBr(b_.CreateICmpSLT(i, c64(e.bounds[k])), arm, next);
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

  /// A libm function of one or two arguments, declared pure so that the
  /// vectoriser may call its libmvec variant.
  llvm::Value* libm(const char* f32Name, const char* f64Name, std::vector<llvm::Value*> args) {
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

  llvm::Value* fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

  /// exp in f32 inline, as XLA's CPU backend emits it
  /// (polynomial_approximations.cc): no call, so no vector registers spilled
  /// around one, and about 1.4× libmvec's throughput. Used in reduction
  /// kernels, whose rows are cache-resident after the first pass so that
  /// exp's throughput bounds them (softmax); pointwise kernels stream from
  /// memory, which hides libmvec's call, and stay smaller to compile (the
  /// inline form is ~25 instructions, copied into every vector and
  /// remainder loop). Cody–Waite reduction x = n·ln2 + r, |r| ≤ ln2/2, a degree-7 Taylor
  /// polynomial for e^r (truncation 5e-9), and 2^n applied as two exact
  /// power-of-two factors so that subnormal results and overflow to inf come
  /// out right: within 2 ulp of the correctly rounded value. f64 keeps
  /// libm/libmvec.
  llvm::Value* expF32(llvm::Value* x) {
    llvm::Type* f = x->getType();
    llvm::Type* i32 = b_.getInt32Ty();
    llvm::Value* clamped = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::minnum, b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, fconst(f, -174.0)), fconst(f, 176.0));
    llvm::Value* n = b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_.CreateFMul(clamped, fconst(f, 1.4426950408889634)));
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
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, result);
  }

  llvm::Value* exp(llvm::Value* x) {
    return x->getType()->isFloatTy() && k_.kind == "reduction" ? expF32(x) : libm("expf", "exp", {x});
  }

  llvm::Value* sigmoid(llvm::Value* x) {
    llvm::Type* t = x->getType();
    llvm::Value* e = exp(b_.CreateFNeg(x));
    return b_.CreateFDiv(fconst(t, 1.0), b_.CreateFAdd(fconst(t, 1.0), e));
  }

  llvm::Value* floatUnary(const Expr& e, llvm::Value* x) {
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
          llvm::Value* inner = b_.CreateFMul(fconst(t, 0.7978845608028654),
                                             b_.CreateFAdd(x, b_.CreateFMul(fconst(t, 0.044715), cube)));
          return b_.CreateFMul(half, b_.CreateFAdd(fconst(t, 1.0), libm("tanhf", "tanh", {inner})));
        }
        llvm::Value* erf = libm("erff", "erf", {b_.CreateFMul(x, fconst(t, 0.7071067811865476))});
        return b_.CreateFMul(half, b_.CreateFAdd(fconst(t, 1.0), erf));
      }
      case OpId::Silu: return b_.CreateFMul(x, sigmoid(x));
      case OpId::Erf: return libm("erff", "erf", {x});
      case OpId::Reciprocal: return b_.CreateFDiv(fconst(t, 1.0), x);
      default: break;
    }
    throw ir::Error(fmt::format("cpu codegen: no float lowering for '{}'", ir::opInfo(e.op).name));
  }

  llvm::Value* intUnary(const Expr& e, llvm::Value* x) {
    llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
    switch (e.op) {
      case OpId::Neg: return b_.CreateSub(zero, x);
      case OpId::Abs: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
      case OpId::Relu: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, zero);
      default: break;
    }
    throw ir::Error(fmt::format("cpu codegen: no integer lowering for '{}'", ir::opInfo(e.op).name));
  }

  /// Converts a computed value of dtype `from` to dtype `to` with
  /// Tensor::setDouble/setInt's rules (saturating float→int, NaN → 0).
  llvm::Value* convert(llvm::Value* v, DType from, DType to) {
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

  llvm::Value* isNonZero(llvm::Value* v) {
    if (v->getType()->isFloatingPointTy()) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }

  llvm::Value* compare(OpId op, llvm::Value* a, llvm::Value* c, bool isFloat) {
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

  llvm::Value* op(const Expr& e) {
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
        case OpId::Pow: r = libm("powf", "pow", {args[0], args[1]}); break;
        case OpId::Maximum: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, args[0], args[1]); break;
        case OpId::Minimum: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, args[0], args[1]); break;
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
      default: break;
    }
    throw ir::Error(fmt::format("cpu codegen: no integer lowering for '{}'", info.name));
  }

  // ---- reductions ----------------------------------------------------------

  /// One row's reduction: floats accumulate in f64 (sum, mean; reassociated
  /// into a fixed vector order) or their compute type (amax, amin through
  /// llvm.maximum/minimum, which propagate NaN as torch does and which the
  /// vectoriser widens), integers in i64 (sum) or their own width.
  llvm::Value* emitReduce(const Expr& e) {
    const DType argType = e.args[0]->dtype;
    const bool isFloat = ir::isFloat(argType);
    const bool isSum = e.op == OpId::Sum || e.op == OpId::Mean;
    const bool isMax = e.op == OpId::Amax;
    llvm::Type* accType = isSum ? (isFloat ? b_.getDoubleTy() : i64()) : computeType(argType);
    llvm::IRBuilder<> entryBuilder(entry_, entry_->begin());
    llvm::AllocaInst* acc = entryBuilder.CreateAlloca(accType, nullptr, "acc");
    llvm::Value* init;
    if (isSum) init = isFloat ? fconst(accType, 0.0) : c64(0);
    else if (isFloat) init = fconst(accType, isMax ? -INFINITY : INFINITY);
    else {
      const unsigned bits = accType->getIntegerBitWidth();
      init = b_.getInt(isMax ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
    }
    b_.CreateStore(init, acc);
    nest(k_.reduceSizes, k_.outer.size(), [&] {
      llvm::Value* v = value(e.args[0]);
      if (auto it = rowScratch_.find(e.args[0].get()); it != rowScratch_.end())
        tagged(b_.CreateStore(v, b_.CreateInBoundsGEP(v->getType(), it->second, innerLinear())));
      llvm::Value* a = b_.CreateLoad(accType, acc);
      llvm::Value* next;
      if (isSum && isFloat) {
        auto* add = llvm::cast<llvm::Instruction>(b_.CreateFAdd(a, b_.CreateFPExt(v, accType)));
        add->setHasAllowReassoc(true);
        next = add;
      } else if (isSum) {
        next = b_.CreateAdd(a, argType == DType::Bool ? b_.CreateZExt(v, i64()) : b_.CreateSExt(v, i64()));
      } else if (isFloat) {
        next = b_.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, v);
      } else {
        next = b_.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, a, v);
      }
      b_.CreateStore(next, acc);
    });
    llvm::Value* r = b_.CreateLoad(accType, acc);
    if (e.op == OpId::Mean) {
      llvm::Value* count = c64(1);
      for (const ir::Dim& d : k_.reduceSizes) count = b_.CreateNSWMul(count, dim(d));
      r = b_.CreateFDiv(r, b_.CreateSIToFP(count, accType));
    }
    llvm::Type* result = computeType(e.dtype);
    if (isFloat) return roundTo(e.dtype, b_.CreateFPCast(r, result));
    return b_.CreateSExtOrTrunc(r, result);
  }

  const Kernel& k_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  KernelSignature signature_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::MDNode* accessGroup_ = nullptr;
  int loopsMade_ = 0;
  llvm::Value *begin_ = nullptr, *end_ = nullptr, *acc_ = nullptr, *linear_ = nullptr;
  std::vector<llvm::Value*> inputs_, outputs_;
  std::unordered_map<std::string, llvm::Value*> sizes_;
  std::vector<llvm::Value*> vars_;
  std::vector<std::unordered_map<const Expr*, llvm::Value*>> scopes_;
  std::unordered_map<const Expr*, llvm::Value*> rowValues_;
  std::unordered_map<const Expr*, llvm::Value*> rowScratch_;  // see planRowScratch
};

}  // namespace

llvm::Function* emitKernel(const Kernel& k, const std::string& name, llvm::Module& m) {
  return Emitter(k, name, m).emit();
}

}  // namespace graphc::codegen::cpu
