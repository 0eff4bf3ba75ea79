// The emitter's loops, kernels, indices, memory and reductions.
#include "codegen/cpu/Emitter.h"

#include <cstring>
#include <set>
#include <unordered_set>

#include <fmt/format.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/MxOperands.h"
#include "codegen/kernel/Analysis.h"
#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cpu {
namespace {

/// Whether index `e` is loop variable `v` itself.
bool isLoopVar(const IndexPtr& e, size_t v) {
  return e->kind == Index::Kind::Var && e->value == static_cast<int64_t>(v);
}

}  // namespace

Emitter::Emitter(const Kernel& k, const std::string& name, llvm::Module& m)
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

llvm::Function* Emitter::emit() {
  entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  accessGroup_ = llvm::MDNode::getDistinct(ctx_, {});
  b_.SetInsertPoint(entry_);
  loadArguments();
  vars_.assign(k_.outer.size() + k_.reduceSizes.size() + 1, nullptr);
  scopes_.emplace_back();
  if (k_.kind == ir::KernelKind::Reduction)
    emitReductionKernel();
  else
    emitElementwiseKernel();
  b_.CreateRetVoid();
  return fn_;
}

llvm::Type* Emitter::i64() { return b_.getInt64Ty(); }

llvm::Value* Emitter::c64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

llvm::Type* Emitter::computeType(DType t) {
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

llvm::Type* Emitter::storageType(DType t) {
  switch (t) {
    case DType::F16: return b_.getHalfTy();
    case DType::BF16: return b_.getInt16Ty();
    case DType::Bool: return b_.getInt8Ty();
    default: return computeType(t);
  }
}

void Emitter::loadArguments() {
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

llvm::Value* Emitter::dim(const ir::Dim& d) {
  // A symbolic dim: its factor (when not 1) times each symbol.
  llvm::Value* v = d.isStatic() || d.size != 1 ? c64(d.size) : nullptr;
  for (const std::string& f : d.factors()) v = v ? b_.CreateNSWMul(v, sizes_.at(f)) : sizes_.at(f);
  return v;
}

llvm::BranchInst* Emitter::whileLess(llvm::Value* from, llvm::Value* to,
                                     const std::function<llvm::Value*(llvm::Value*)>& body, const char* name) {
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

void Emitter::loop(llvm::Value* from, llvm::Value* to, const std::function<void(llvm::Value*)>& body) {
  const int loopsBefore = ++loopsMade_;
  llvm::BranchInst* latch = whileLess(
      from, to,
      [&](llvm::Value* iv) {
        body(iv);
        return b_.CreateNSWAdd(iv, c64(1));
      },
      "i");
  if (loopsMade_ == loopsBefore) {  // no loop inside: innermost
    llvm::MDNode* parallel =
        llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"), accessGroup_});
    llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, {nullptr, parallel});
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
}

void Emitter::nest(const std::vector<ir::Dim>& dims, size_t first, const std::function<void()>& body, size_t d) {
  if (d == dims.size()) {
    body();
    return;
  }
  loop(c64(0), dim(dims[d]), [&](llvm::Value* iv) {
    vars_[first + d] = iv;
    nest(dims, first, body, d + 1);
  });
}

void Emitter::unravelOuter(llvm::Value* linear) {
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

void Emitter::emitElementwiseKernel() {
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
  if (readsAcrossRows(k_)) {
    emitTiles();
    return;
  }
  emitRuns(begin_, end_);
}

void Emitter::emitRuns(llvm::Value* from, llvm::Value* to) {
  const size_t rank = k_.outer.size();
  llvm::Value* last = dim(k_.outer.back());
  whileLess(
      from, to,
      [&](llvm::Value* lin) {
        unravelOuter(lin);
        llvm::Value* first = vars_[rank - 1];
        llvm::Value* runStart = b_.CreateNSWSub(lin, first);
        llvm::Value* runEnd = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, to, b_.CreateNSWAdd(runStart, last));
        loop(first, b_.CreateNSWSub(runEnd, runStart), [&](llvm::Value* j) {
          vars_[rank - 1] = j;
          linear_ = b_.CreateNSWAdd(runStart, j);
          emitStores(false);
        });
        return runEnd;
      },
      "run");
}

bool Emitter::readsAcrossRows(const Kernel& k) {
  const size_t rank = k.outer.size();
  if (rank < 2 || k.gemm || k.attention || k.kind == ir::KernelKind::Reduction) return false;
  for (const Store& s : k.stores) {
    if (s.buffer == Store::kScores || s.index.size() != rank) return false;
    for (size_t d = 0; d < rank; ++d)
      if (!isLoopVar(s.index[d], d)) return false;
  }
  const auto readsColumn = [&](const IndexPtr& e) {
    return readsVar(e, [&](int64_t v) { return v == static_cast<int64_t>(rank - 1); });
  };
  std::function<bool(const Expr&)> transposedLoad = [&](const Expr& e) {
    if (e.kind == Expr::Kind::Load && !e.index.empty() && isLoopVar(e.index.back(), rank - 2) &&
        std::any_of(e.index.begin(), e.index.end() - 1, readsColumn))
      return true;
    return std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return a && transposedLoad(*a); });
  };
  return std::any_of(k.stores.begin(), k.stores.end(), [&](const Store& s) { return transposedLoad(*s.value); });
}

void Emitter::emitTiles() {
  // Rows of 16 elements: a 64-byte line of f32 read per column of a tile,
  // and the tile's 16 output lines written a column at a time stay in L1.
  constexpr int64_t kTileRows = 16;
  const size_t rank = k_.outer.size();
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "tiles", fn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "tiles.done", fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin_, end_), body, done);  // points to do: no dim is 0
  b_.SetInsertPoint(body);
  llvm::Value* last = dim(k_.outer[rank - 1]);
  llvm::Value* rows = dim(k_.outer[rank - 2]);
  // The flattened rows that lie whole in [begin, end) go by tiles; the
  // partial rows at either end go by runs.
  llvm::Value* firstRow = b_.CreateUDiv(b_.CreateNSWAdd(begin_, b_.CreateNSWSub(last, c64(1))), last);
  llvm::Value* endRow = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, firstRow, b_.CreateUDiv(end_, last));
  llvm::Value* tiledBegin = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end_, b_.CreateNSWMul(firstRow, last));
  llvm::Value* tiledEnd = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, tiledBegin, b_.CreateNSWMul(endRow, last));
  emitRuns(begin_, tiledBegin);
  whileLess(
      firstRow, endRow,
      [&](llvm::Value* row0) {
        unravelOuter(b_.CreateNSWMul(row0, last));
        // A tile stays inside one run of the row dim (its rows are
        // consecutive in what the transposed read walks).
        llvm::Value* r0 = vars_[rank - 2];
        llvm::Value* count =
            b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateNSWSub(endRow, row0), c64(kTileRows));
        count = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, count, b_.CreateNSWSub(rows, r0));
        loop(c64(0), last, [&](llvm::Value* j) {
          loop(c64(0), count, [&](llvm::Value* t) {
            vars_[rank - 2] = b_.CreateNSWAdd(r0, t);
            vars_[rank - 1] = j;
            linear_ = b_.CreateNSWAdd(b_.CreateNSWMul(b_.CreateNSWAdd(row0, t), last), j);
            emitStores(false);
          });
        });
        return b_.CreateNSWAdd(row0, count);
      },
      "tile");
  emitRuns(tiledEnd, end_);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void Emitter::emitReductionKernel() {
  const size_t rank = k_.outer.size();
  const std::vector<const Expr*> order = reductionOrder(k_);  // dependencies first
  if (reducesAcrossRows(k_, order)) {
    emitColumnReduction(*order.front());
    return;
  }
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
          auto* load = tagged(b_.CreateLoad(computeType(expr->dtype),
                                            b_.CreateInBoundsGEP(computeType(expr->dtype), buffer, innerLinear())));
          scopes_.back()[expr] = load;
        }
        emitStores(true);
      });
  });
}

bool Emitter::reducesAcrossRows(const Kernel& k, const std::vector<const Expr*>& order) {
  const size_t rank = k.outer.size();
  if (rank == 0 || order.size() != 1 || k.gemm || k.attention) return false;
  for (const Store& s : k.stores)
    if (s.insideReduction || s.buffer == Store::kScores) return false;
  // Every load the reduction reads runs along the last outer dim (its last
  // index is that loop's variable) and reads a reduced one.
  const auto readsReduced = [&](const IndexPtr& e) {
    return readsVar(e, [&](int64_t v) { return v >= static_cast<int64_t>(rank); });
  };
  // Where a reduced dim's elements lie less than a page apart, each row's
  // lines are still in cache for the next outputs, and rows win.
  constexpr int64_t kPageFloats = 1024;
  bool pageApart = false;
  std::function<bool(const Expr&)> alongRows = [&](const Expr& e) {
    if (e.kind == Expr::Kind::Reduce && &e != order.front()) return false;
    if (e.kind == Expr::Kind::Select) return false;
    if (e.kind == Expr::Kind::Load) {
      if (e.index.empty() || !isLoopVar(e.index.back(), rank - 1) ||
          !std::any_of(e.index.begin(), e.index.end(), readsReduced))
        return false;
      const std::vector<ir::Dim>& shape = k.inputs[static_cast<size_t>(e.buffer)].type.shape;
      int64_t stride = 1;  // of dim d, in elements; a symbolic dim counts as a page
      for (size_t d = e.index.size(); d-- > 0;) {
        if (readsReduced(e.index[d]) && stride >= kPageFloats) pageApart = true;
        stride =
            std::min(stride * (shape[d].isStatic() ? std::max<int64_t>(shape[d].size, 1) : kPageFloats), kPageFloats);
      }
    }
    for (const IndexPtr& i : e.index)
      if (i->kind == Index::Kind::Indirect) return false;
    return std::all_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return !a || alongRows(*a); });
  };
  return alongRows(*order.front()->args[0]) && pageApart;
}

void Emitter::emitColumnReduction(const Expr& reduce) {
  // A tile's accumulators: 32 outputs, 128 bytes of f32 read per step.
  constexpr int64_t kTile = 32;
  const size_t rank = k_.outer.size();
  const Accumulator kind = accumulatorOf(reduce);
  llvm::IRBuilder<> entryBuilder(entry_, entry_->begin());
  llvm::AllocaInst* acc = entryBuilder.CreateAlloca(kind.type, c64(kTile), "acc");
  llvm::Value* last = dim(k_.outer[rank - 1]);
  whileLess(
      begin_, end_,
      [&](llvm::Value* lin) {
        unravelOuter(lin);
        llvm::Value* first = vars_[rank - 1];
        llvm::Value* count =
            b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateNSWSub(end_, lin), b_.CreateNSWSub(last, first));
        count = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, count, c64(kTile));
        loop(c64(0), count,
             [&](llvm::Value* t) { b_.CreateStore(kind.init, b_.CreateInBoundsGEP(kind.type, acc, t)); });
        nest(k_.reduceSizes, rank, [&] {
          loop(c64(0), count, [&](llvm::Value* t) {
            vars_[rank - 1] = b_.CreateNSWAdd(first, t);
            llvm::Value* at = b_.CreateInBoundsGEP(kind.type, acc, t);
            b_.CreateStore(accumulate(reduce, b_.CreateLoad(kind.type, at), value(reduce.args[0])), at);
          });
        });
        loop(c64(0), count, [&](llvm::Value* t) {
          vars_[rank - 1] = b_.CreateNSWAdd(first, t);
          linear_ = b_.CreateNSWAdd(lin, t);
          rowValues_.clear();
          rowValues_[&reduce] = finishReduce(reduce, b_.CreateLoad(kind.type, b_.CreateInBoundsGEP(kind.type, acc, t)));
          emitStores(false);
        });
        return b_.CreateNSWAdd(lin, count);
      },
      "columns");
}

void Emitter::planRowScratch(const std::vector<const Expr*>& reduces) {
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
    if (arg->kind != Expr::Kind::Op || !usedByStores.count(arg) || rowScratchOf(arg)) continue;
    rowScratch_.emplace_back(arg, entryBuilder.CreateAlloca(computeType(arg->dtype), c64(row), "row"));
  }
}

void Emitter::collectOperands(const Expr* e, std::unordered_set<const Expr*>& out,
                              std::unordered_set<const Expr*>& seen) {
  if (!seen.insert(e).second) return;
  out.insert(e);
  if (e->kind == Expr::Kind::Reduce) return;
  for (const ExprPtr& a : e->args) collectOperands(a.get(), out, seen);
}

llvm::Value* Emitter::innerLinear() {
  llvm::Value* linear = c64(0);
  for (size_t d = 0; d < k_.reduceSizes.size(); ++d)
    linear = b_.CreateNSWAdd(b_.CreateNSWMul(linear, dim(k_.reduceSizes[d])), vars_[k_.outer.size() + d]);
  return linear;
}

void Emitter::emitStores(bool insideReduction) {
  std::vector<std::pair<const Store*, llvm::Value*>> values;
  for (const Store& s : k_.stores)
    if (s.insideReduction == insideReduction) values.emplace_back(&s, value(s.value));
  for (auto& [s, v] : values) {
    if (s->buffer == Store::kScores) {  // an attention kernel's scores: back into the f32 tile they came from
      storeElement(DType::F32, b_.CreateInBoundsGEP(b_.getFloatTy(), acc_, b_.CreateNSWSub(linear_, begin_)), v);
      continue;
    }
    const Buffer& out = k_.outputs[static_cast<size_t>(s->buffer)];
    storeElement(out.type.dtype, address(outputs_[static_cast<size_t>(s->buffer)], out.type, s->index), v);
  }
}

llvm::Value* Emitter::index(const IndexPtr& e) {
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
    case Index::Kind::Clamp: {
      llvm::Value* v =
          b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, index(e->lhs), b_.CreateSub(index(e->rhs), c64(1)));
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v, c64(0));
    }
  }
  return nullptr;
}

namespace {

using codegen::kernel::Index;

/// An index as a digit of some x: (x / p) % m (m = 0: no modulus).
struct Digit {
  IndexPtr x;
  int64_t p = 1, m = 0;
};

Digit digitOf(const IndexPtr& e) {
  auto constant = [](const IndexPtr& i) { return i->kind == Index::Kind::Const ? i->value : 0; };
  if (e->kind == Index::Kind::Div && constant(e->rhs) > 0) return {e->lhs, constant(e->rhs), 0};
  if (e->kind == Index::Kind::Mod && constant(e->rhs) > 0) {
    const Digit inner = digitOf(e->lhs);
    if (inner.m == 0 && inner.p > 1) return {inner.x, inner.p, constant(e->rhs)};
    return {e->lhs, 1, constant(e->rhs)};
  }
  return {e, 1, 0};
}

}  // namespace

IndexPtr Emitter::digitBase(const IndexPtr& e) { return digitOf(e).x; }

size_t Emitter::unravelledRun(const ir::TensorType& t, const std::vector<IndexPtr>& idx, size_t d) {
  // The longest run idx[d..] = the digits of one x over t's dims d.. (all
  // static): the first x / p (or x when the run covers x's whole range),
  // the others (x / p) % size, the last x % size.
  const Digit first = digitOf(idx[d]);
  if (first.m != 0) return 1;
  size_t best = 1;
  for (size_t end = d + 2; end <= idx.size(); ++end) {
    int64_t stride = 1;
    bool ok = true;
    for (size_t e = end; e-- > d;) {
      if (!t.shape[e].isStatic()) {
        ok = false;
        break;
      }
      const Digit digit = digitOf(idx[e]);
      const bool isFirst = e == d;
      const bool sameX = digit.x == first.x || (digit.x->kind == Index::Kind::Var &&
                                                first.x->kind == Index::Kind::Var && digit.x->value == first.x->value);
      if (!sameX || digit.p != stride || (!isFirst && digit.m != t.shape[e].size) || (isFirst && digit.m != 0)) {
        ok = false;
        break;
      }
      stride *= t.shape[e].size;
    }
    if (ok) best = end - d;
  }
  return best;
}

llvm::Value* Emitter::address(llvm::Value* base, const ir::TensorType& t, const std::vector<IndexPtr>& idx) {
  return b_.CreateInBoundsGEP(storageType(t.dtype), base, linearIndex(t, idx));
}

llvm::Value* Emitter::linearIndex(const ir::TensorType& t, const std::vector<IndexPtr>& idx) {
  llvm::Value* linear = c64(0);
  for (size_t d = 0; d < idx.size(); ++d) {
    // Merged dims' digits [j / (w·v), (j / v) % w, j % v] over dims of
    // sizes [h, w, v] ravel to j itself: emitted so, the read is
    // contiguous in j, as the vectoriser needs (MergeInnerDims.cpp).
    if (const size_t run = unravelledRun(t, idx, d); run > 1) {
      llvm::Value* extent = c64(1);
      for (size_t e = d; e < d + run; ++e) extent = b_.CreateNSWMul(extent, dim(t.shape[e]));
      linear = b_.CreateNSWAdd(b_.CreateNSWMul(linear, extent), index(digitBase(idx[d])));
      d += run - 1;
      continue;
    }
    linear = b_.CreateNSWAdd(b_.CreateNSWMul(linear, dim(t.shape[d])), index(idx[d]));
  }
  return linear;
}

llvm::Value* Emitter::loadMx(const kernel::MxLayout& mx, llvm::Value* base, llvm::Value* linear) {
  // The stored (row, col) of logical element `linear` (a transposed weight
  // is stored [cols of the logical matrix][its rows]).
  llvm::Value* row = mx.transposed ? b_.CreateSRem(linear, c64(mx.rows)) : b_.CreateSDiv(linear, c64(mx.cols));
  llvm::Value* col = mx.transposed ? b_.CreateSDiv(linear, c64(mx.rows)) : b_.CreateSRem(linear, c64(mx.cols));
  llvm::Type* byte = b_.getInt8Ty();
  llvm::Value* rowBytes =
      b_.CreateInBoundsGEP(byte, base, b_.CreateNSWMul(row, c64(ir::mxRowBytes(mx.format, mx.cols))));
  if (!ir::mxHasScales(mx.format)) {  // f16/bf16: the element's 16 bits
    llvm::Value* bits = tagged(
        b_.CreateAlignedLoad(b_.getInt16Ty(), b_.CreateInBoundsGEP(b_.getInt16Ty(), rowBytes, col), llvm::Align(1)));
    return mx.format == ir::MxFormat::F16 ? b_.CreateFPExt(b_.CreateBitCast(bits, b_.getHalfTy()), b_.getFloatTy())
                                          : bf16ToFloat(bits);
  }
  // The element's code: its bits in the row, low bits first; the byte after
  // it is always inside the buffer (codegen/MxOperands.h pads the rows).
  const int width = ir::mxFormatInfo(mx.format).bits;
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Value* bit = b_.CreateNSWMul(col, c64(width));
  llvm::Value* at = b_.CreateInBoundsGEP(byte, rowBytes, b_.CreateLShr(bit, 3));
  llvm::Value* lo = b_.CreateZExt(tagged(b_.CreateAlignedLoad(byte, at, llvm::Align(1))), i32);
  llvm::Value* hi =
      b_.CreateZExt(tagged(b_.CreateAlignedLoad(byte, b_.CreateInBoundsGEP(byte, at, c64(1)), llvm::Align(1))), i32);
  llvm::Value* word = b_.CreateOr(lo, b_.CreateShl(hi, 8));
  llvm::Value* shift = b_.CreateTrunc(b_.CreateAnd(bit, c64(7)), i32);
  llvm::Value* code = b_.CreateAnd(b_.CreateLShr(word, shift), b_.getInt32((1u << width) - 1));
  // Its value from the format's table, times the block's E8M0 scale.
  llvm::Value* value = b_.CreateBitCast(
      tagged(b_.CreateAlignedLoad(i32, b_.CreateInBoundsGEP(i32, mxTable(mx.format), b_.CreateZExt(code, i64())),
                                  llvm::Align(4))),
      b_.getFloatTy());
  const int64_t blocks = ir::mxRowBlocks(mx.cols);
  llvm::Value* scaleAt =
      b_.CreateNSWAdd(c64(mxScalesOffset(mx)),
                      b_.CreateNSWAdd(b_.CreateNSWMul(row, c64(blocks)), b_.CreateSDiv(col, c64(ir::kMxBlock))));
  llvm::Value* scale =
      b_.CreateZExt(tagged(b_.CreateAlignedLoad(byte, b_.CreateInBoundsGEP(byte, base, scaleAt), llvm::Align(1))), i32);
  // 2^(s - 127): s << 23 as f32 bits, 2^-127 (a subnormal) for 0, NaN for 0xFF.
  llvm::Value* scaleBits =
      b_.CreateSelect(b_.CreateICmpEQ(scale, b_.getInt32(0)), b_.getInt32(0x00400000), b_.CreateShl(scale, 23));
  scaleBits = b_.CreateSelect(b_.CreateICmpEQ(scale, b_.getInt32(255)), b_.getInt32(0x7fc00000), scaleBits);
  return b_.CreateFMul(value, b_.CreateBitCast(scaleBits, b_.getFloatTy()));
}

llvm::Value* Emitter::mxTable(ir::MxFormat f) {
  const std::string name = fmt::format("graphc_{}_table", ir::mxFormatInfo(f).name);
  if (llvm::GlobalVariable* g = m_.getNamedGlobal(name)) return g;
  const float* values = ir::mxDecodeTable(f);
  std::vector<uint32_t> bits(static_cast<size_t>(1) << ir::mxFormatInfo(f).bits);
  for (size_t c = 0; c < bits.size(); ++c) std::memcpy(&bits[c], &values[c], 4);
  llvm::Constant* init = llvm::ConstantDataArray::get(ctx_, bits);
  return new llvm::GlobalVariable(m_, init->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, init,
                                  name);
}

llvm::Value* Emitter::loadElement(DType t, llvm::Value* addr) {
  llvm::Type* st = storageType(t);
  llvm::Value* raw = tagged(b_.CreateAlignedLoad(st, addr, llvm::Align(ir::dtypeSize(t))));
  switch (t) {
    case DType::F16: return b_.CreateFPExt(raw, b_.getFloatTy());
    case DType::BF16: return bf16ToFloat(raw);
    case DType::Bool: return b_.CreateICmpNE(raw, b_.getInt8(0));
    default: return raw;
  }
}

void Emitter::storeElement(DType t, llvm::Value* addr, llvm::Value* v) {
  llvm::Value* raw = v;
  switch (t) {
    case DType::F16: raw = b_.CreateFPTrunc(v, b_.getHalfTy()); break;
    case DType::BF16: raw = floatToBf16Bits(v); break;
    case DType::Bool: raw = b_.CreateZExt(v, b_.getInt8Ty()); break;
    default: break;
  }
  tagged(b_.CreateAlignedStore(raw, addr, llvm::Align(ir::dtypeSize(t))));
}

llvm::Value* Emitter::bf16ToFloat(llvm::Value* bits16) {
  llvm::Value* wide = b_.CreateShl(b_.CreateZExt(bits16, b_.getInt32Ty()), 16);
  return b_.CreateBitCast(wide, b_.getFloatTy());
}

llvm::Value* Emitter::floatToBf16Bits(llvm::Value* f) {
  llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
  llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
  llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
  llvm::Value* quiet = b_.CreateOr(b_.CreateLShr(bits, 16), b_.getInt32(0x40));
  llvm::Value* r = b_.CreateSelect(b_.CreateFCmpUNO(f, f), quiet, rounded);
  return b_.CreateTrunc(r, b_.getInt16Ty());
}

llvm::Value* Emitter::roundTo(DType t, llvm::Value* v) {
  if (t == DType::F16) return b_.CreateFPExt(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getFloatTy());
  if (t == DType::BF16) return bf16ToFloat(floatToBf16Bits(v));
  return v;
}

Emitter::Accumulator Emitter::accumulatorOf(const Expr& e) {
  const DType argType = e.args[0]->dtype;
  const bool isFloat = ir::isFloat(argType);
  const bool isSum = e.op == OpId::Sum || e.op == OpId::Mean;
  const bool isProd = e.op == OpId::Prod;
  const bool isMax = e.op == OpId::Amax;
  llvm::Type* type = isSum || isProd ? (isFloat ? b_.getDoubleTy() : i64()) : computeType(argType);
  if (isSum || isProd) return {type, isFloat ? fconst(type, isProd ? 1.0 : 0.0) : c64(isProd ? 1 : 0)};
  if (isFloat) return {type, fconst(type, isMax ? -INFINITY : INFINITY)};
  const unsigned bits = type->getIntegerBitWidth();
  return {type, b_.getInt(isMax ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits))};
}

llvm::Value* Emitter::accumulate(const Expr& e, llvm::Value* a, llvm::Value* v) {
  const DType argType = e.args[0]->dtype;
  const bool isFloat = ir::isFloat(argType);
  const bool isSum = e.op == OpId::Sum || e.op == OpId::Mean;
  const bool isProd = e.op == OpId::Prod;
  const bool isMax = e.op == OpId::Amax;
  if ((isSum || isProd) && isFloat) {
    llvm::Value* wide = b_.CreateFPExt(v, a->getType());
    auto* step = llvm::cast<llvm::Instruction>(isProd ? b_.CreateFMul(a, wide) : b_.CreateFAdd(a, wide));
    step->setHasAllowReassoc(true);
    return step;
  }
  if (isSum || isProd) {
    llvm::Value* wide = argType == DType::Bool ? b_.CreateZExt(v, i64()) : b_.CreateSExt(v, i64());
    return isProd ? b_.CreateMul(a, wide) : b_.CreateAdd(a, wide);
  }
  if (isFloat) return b_.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, v);
  return b_.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, a, v);
}

llvm::Value* Emitter::finishReduce(const Expr& e, llvm::Value* r) {
  if (e.op == OpId::Mean) {
    llvm::Value* count = c64(1);
    for (const ir::Dim& d : k_.reduceSizes) count = b_.CreateNSWMul(count, dim(d));
    r = b_.CreateFDiv(r, b_.CreateSIToFP(count, r->getType()));
  }
  llvm::Type* result = computeType(e.dtype);
  if (ir::isFloat(e.args[0]->dtype)) return roundTo(e.dtype, b_.CreateFPCast(r, result));
  return b_.CreateSExtOrTrunc(r, result);
}

llvm::Value* Emitter::emitReduce(const Expr& e) {
  const Accumulator kind = accumulatorOf(e);
  llvm::IRBuilder<> entryBuilder(entry_, entry_->begin());
  llvm::AllocaInst* acc = entryBuilder.CreateAlloca(kind.type, nullptr, "acc");
  b_.CreateStore(kind.init, acc);
  nest(k_.reduceSizes, k_.outer.size(), [&] {
    llvm::Value* v = value(e.args[0]);
    if (llvm::Value* scratch = rowScratchOf(e.args[0].get()))
      tagged(b_.CreateStore(v, b_.CreateInBoundsGEP(v->getType(), scratch, innerLinear())));
    b_.CreateStore(accumulate(e, b_.CreateLoad(kind.type, acc), v), acc);
  });
  return finishReduce(e, b_.CreateLoad(kind.type, acc));
}

}  // namespace graphc::codegen::cpu
