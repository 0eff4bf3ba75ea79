// The cpu backend's kernel emitter: one kernel IR function as one LLVM
// function, void(buffers, sizes, begin, end[, acc]) over outer points
// [begin, end) (KernelEmitter.h has the contract). The loop nests, indices,
// memory and reductions are in Emitter.cpp; the pointwise expressions (ops,
// conversions, libm and its vector variants) in EmitExpressions.cpp.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/cpu/KernelEmitter.h"

namespace graphc::codegen::cpu {

using namespace codegen::kernel;
using ir::DType;
using ir::OpId;

class Emitter {
 public:
  Emitter(const Kernel& k, const std::string& name, llvm::Module& m);

  llvm::Function* emit();

 private:
  // ---- types and arguments (Emitter.cpp) ------------------------------------

  llvm::Type* i64();
  llvm::Value* c64(int64_t v);

  /// The type a value of `t` is computed in: f16/bf16 in f32, bool as i1.
  llvm::Type* computeType(DType t);

  llvm::Type* storageType(DType t);

  void loadArguments();

  llvm::Value* dim(const ir::Dim& d);

  // ---- loops (Emitter.cpp) --------------------------------------------------

  /// for (iv = from; iv < to; iv = body(iv)): the body returns the next
  /// value of iv. Returns the latch branch (where loop metadata goes).
  llvm::BranchInst* whileLess(llvm::Value* from, llvm::Value* to, const std::function<llvm::Value*(llvm::Value*)>& body,
                              const char* name);

  /// for (iv = from; iv < to; ++iv) body(iv). An innermost loop is marked
  /// parallel (llvm.loop.parallel_accesses): its iterations touch distinct
  /// elements of every buffer (the plan's buffers are disjoint, or, for an
  /// in-place kernel, the same element of input and output), and reduction
  /// accumulators live in registers; so the vectoriser needs no run-time
  /// alias checks, which in-place kernels would fail.
  void loop(llvm::Value* from, llvm::Value* to, const std::function<void(llvm::Value*)>& body);

  /// Tags a buffer access as one of the kernel's parallel accesses.
  template <typename I>
  I* tagged(I* access) {
    access->setMetadata(llvm::LLVMContext::MD_access_group, accessGroup_);
    return access;
  }

  /// Loops over every point of `dims`, binding vars_[first...].
  void nest(const std::vector<ir::Dim>& dims, size_t first, const std::function<void()>& body, size_t d = 0);

  /// Binds vars_[0..rank) to the multi-index of the flattened outer point `linear`.
  void unravelOuter(llvm::Value* linear);

  // ---- kernels (Emitter.cpp) ------------------------------------------------

  /// Pointwise and matmul-epilogue kernels: [begin, end) of the flattened
  /// outer space, walked as runs along the last dim so that the innermost
  /// loop is a unit-stride counted loop.
  void emitElementwiseKernel();
  /// The points [from, to) of the flattened outer space as runs along the
  /// last dim.
  void emitRuns(llvm::Value* from, llvm::Value* to);
  /// Whether a pointwise kernel stores along its last dim (every store at
  /// [i0, ..., in]) and reads some input along the dim before it (a load
  /// whose last index is i(n-1) and whose others read in): a transpose, for
  /// which runs along the last dim read one element per line (and per
  /// page, for long rows).
  static bool readsAcrossRows(const Kernel& k);
  /// Such a kernel by tiles of up to 16 rows: columns outer, rows inner,
  /// so the transposed read walks a line and the stores fill the tile's
  /// lines in L1; the partial rows at the ends of [begin, end) by runs.
  /// Each point is computed as by runs, only in another order.
  void emitTiles();

  /// Row reductions: for each outer point of [begin, end), the row values
  /// (the Reduce expressions, dependencies first), then the per-row stores,
  /// then a loop over the row's elements for the per-element stores.
  void emitReductionKernel();

  /// Softmax's exp(x - max) is needed by its sum and again by each output
  /// element. Rather than compute it twice, the reduction loop keeps each
  /// element's value in a row buffer on the stack (L1-resident) that the
  /// per-element loop reads: for a reduction argument that an inside store
  /// also uses, over a static row of at most 64 KiB.
  void planRowScratch(const std::vector<const Expr*>& reduces);

  /// The expressions a store reads at each element, reductions as leaves.
  void collectOperands(const Expr* e, std::unordered_set<const Expr*>& out, std::unordered_set<const Expr*>& seen);

  /// The flattened position of the current point within its row.
  llvm::Value* innerLinear();

  /// Computes every value first, then stores: an in-place kernel's output
  /// may be the buffer an input of the same point is read from.
  void emitStores(bool insideReduction);

  // ---- indices and memory (Emitter.cpp) -------------------------------------

  llvm::Value* index(const IndexPtr& e);

  llvm::Value* address(llvm::Value* base, const ir::TensorType& t, const std::vector<IndexPtr>& idx);
  /// The element offset of `idx` in a buffer of type `t`.
  llvm::Value* linearIndex(const ir::TensorType& t, const std::vector<IndexPtr>& idx);
  /// Logical element `linear` of an input held in an MX format (or
  /// f16/bf16) at `base`, dequantised to f32 as the cpu GEMM's packing does:
  /// the format's table entry times the block's scale.
  llvm::Value* loadMx(const kernel::MxLayout& mx, llvm::Value* base, llvm::Value* linear);
  /// The module's table of the format's element values (f32 bits by code).
  llvm::Value* mxTable(ir::MxFormat f);
  /// How many of idx[d..] are the digits of one index over t's dims (≥ 2:
  /// they ravel to that index), and that index.
  static size_t unravelledRun(const ir::TensorType& t, const std::vector<IndexPtr>& idx, size_t d);
  static IndexPtr digitBase(const IndexPtr& e);

  llvm::Value* loadElement(DType t, llvm::Value* addr);

  void storeElement(DType t, llvm::Value* addr, llvm::Value* v);

  llvm::Value* bf16ToFloat(llvm::Value* bits16);

  /// Round to nearest even, NaN kept quiet (ir/Half.h's floatToBf16).
  llvm::Value* floatToBf16Bits(llvm::Value* f);

  /// A computed value rounded to what its dtype holds.
  llvm::Value* roundTo(DType t, llvm::Value* v);

  // ---- expressions (EmitExpressions.cpp) ------------------------------------

  llvm::Value* value(const ExprPtr& e);

  llvm::Value* compute(const Expr& e);

  /// A Const, exact: a float rounded to its dtype, an integer that never
  /// passes through a double.
  llvm::Value* constant(const Expr& e);

  /// concat's piecewise read, as branches: a piece's index map is only in
  /// bounds inside its own range.
  llvm::Value* select(const Expr& e);

  /// A libm function of one or two arguments, declared pure so that the
  /// vectoriser may call its libmvec variant.
  llvm::Value* libm(const char* f32Name, const char* f64Name, std::vector<llvm::Value*> args);
  /// x^y, where y's expression is `exponent`.
  llvm::Value* power(const Expr& exponent, llvm::Value* x, llvm::Value* y);

  llvm::Value* fconst(llvm::Type* t, double v);

  /// exp in f32 inline, as XLA's CPU backend emits it
  /// (polynomial_approximations.cc): no call, so no vector registers spilled
  /// around one, and about 1.4× libmvec's throughput. Used in reduction
  /// kernels, whose rows are cache-resident after the first pass so that
  /// exp's throughput bounds them (softmax); pointwise kernels stream from
  /// memory, which hides libmvec's call, and stay smaller to compile (the
  /// inline form is ~25 instructions, copied into every vector and
  /// remainder loop). Cody–Waite reduction x = n·ln2 + r, |r| ≤ ln2/2, a degree-7 Taylor
  /// polynomial for e^r (truncation 5e-9), and 2^n applied as two exact
  /// power-of-two factors so that overflow to inf comes out right: within 2
  /// ulp of the correctly rounded value for normal results. A result below
  /// FLT_MIN is 0 (flushed, with no subnormal intermediate: those cost ~100
  /// cycles an operation, and a masked softmax computes exp(-3.4e38) for
  /// every masked score). f64 keeps libm/libmvec.
  llvm::Value* expF32(llvm::Value* x);

  llvm::Value* exp(llvm::Value* x);

  llvm::Value* sigmoid(llvm::Value* x);

  llvm::Value* floatUnary(const Expr& e, llvm::Value* x);

  llvm::Value* intUnary(const Expr& e, llvm::Value* x);

  /// fmod, remainder and floor_divide, as the reference computes them
  /// (floats: c10's div_floor_floating; integers: a zero divisor gives 0).
  llvm::Value* floatDivision(OpId op, llvm::Value* a, llvm::Value* b);
  llvm::Value* intDivision(OpId op, llvm::Value* a, llvm::Value* b);

  /// Converts a computed value of dtype `from` to dtype `to` with
  /// Tensor::setDouble/setInt's rules (saturating float→int, NaN → 0).
  llvm::Value* convert(llvm::Value* v, DType from, DType to);

  llvm::Value* isNonZero(llvm::Value* v);

  llvm::Value* compare(OpId op, llvm::Value* a, llvm::Value* c, bool isFloat);

  llvm::Value* op(const Expr& e);

  // ---- reductions (Emitter.cpp) ---------------------------------------------

  /// One row's reduction: floats accumulate in f64 (sum, mean; reassociated
  /// into a fixed vector order) or their compute type (amax, amin through
  /// llvm.maximum/minimum, which propagate NaN as torch does and which the
  /// vectoriser widens), integers in i64 (sum) or their own width.
  llvm::Value* emitReduce(const Expr& e);
  /// A reduction's accumulator type and initial value; one step of it; its
  /// result (mean's division, the cast to the result's dtype).
  struct Accumulator {
    llvm::Type* type;
    llvm::Value* init;
  };
  Accumulator accumulatorOf(const Expr& e);
  llvm::Value* accumulate(const Expr& e, llvm::Value* a, llvm::Value* v);
  llvm::Value* finishReduce(const Expr& e, llvm::Value* r);

  /// Whether a reduction kernel has one reduction, stores only each row's
  /// result, reads every input along its last outer dim, and some input's
  /// reduced elements a page or more apart (a bias's gradient, the sum of
  /// [2048, 1024] over its rows): reduced row by row, each output's read
  /// would touch a page per element.
  static bool reducesAcrossRows(const Kernel& k, const std::vector<const Expr*>& order);
  /// Such a kernel by tiles of up to 32 consecutive outputs: the reduced
  /// loops outer, the tile's outputs inner, each accumulating in its own
  /// slot, in order over the reduced loops.
  void emitColumnReduction(const Expr& reduce);

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
  // see planRowScratch; in the reduces' order (a vector, not a map keyed by
  // address), so that the IR emitted does not depend on addresses
  std::vector<std::pair<const Expr*, llvm::Value*>> rowScratch_;
  llvm::Value* rowScratchOf(const Expr* e) const {
    for (const auto& [expr, buffer] : rowScratch_)
      if (expr == e) return buffer;
    return nullptr;
  }
};

}  // namespace graphc::codegen::cpu
