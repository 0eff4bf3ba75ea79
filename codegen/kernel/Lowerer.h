// The lowering's state and its parts; internal to codegen/kernel. The
// kernel shapes, the walk over the body and the shape ops are in
// Lowering.cpp, the window ops (conv, conv_transpose, pools, cumsum) in
// LowerWindows.cpp, the ops that read at computed indices (index_select,
// gather, gather_nd, resize) and iota in LowerIndexing.cpp.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"

namespace graphc::codegen::kernel {

// ---- building expressions ------------------------------------------------------

ExprPtr constantOf(DType t, double v);
ExprPtr opOf(OpId op, DType t, std::vector<ExprPtr> args, ir::AttrMap attrs = {});
/// `e` as dtype t (e itself when it is one already).
ExprPtr castTo(ExprPtr e, DType t);
ExprPtr whereOf(ExprPtr condition, ExprPtr a, ExprPtr b);
/// Whether 0 ≤ index[k] < sizes[k] for every k.
ExprPtr inBounds(Indices index, Indices sizes);
/// The value of an index as dtype t.
ExprPtr indexValue(IndexPtr index, DType t);
/// The type a window's products or a resampling accumulate in: f64 for
/// f64, f32 for the other floats (f16/bf16 round once, at the end).
DType accumulationType(DType t);

// ---- index maps ----------------------------------------------------------------

IndexPtr ravel(const Indices& idx, const ir::Shape& shape);
Indices unravel(const IndexPtr& linear, const ir::Shape& shape);
/// The index of an operand of shape `from` read at `idx` of a broadcast result of shape `to`.
Indices broadcast(const Indices& idx, const ir::Shape& to, const ir::Shape& from);

/// sum, mean, amax, amin, prod: what becomes a Reduce over the inner loops.
bool isReduce(OpId op);
/// conv, conv_transpose, max_pool, avg_pool, cumsum: a reduction over a
/// window of the input for each output element.
bool isWindow(OpId op);

/// UnrollWindows.cpp: `k` with its small static window unrolled into a
/// pointwise kernel, or `k` itself where that does not apply.
Kernel unrollSmallWindow(Kernel k);
/// MergeInnerDims.cpp: a pointwise or epilogue kernel with its short
/// static inner dims merged into the dim before.
Kernel mergeShortInnerDims(Kernel k);

class Lowerer {
 public:
  Lowerer(const ir::Node& fused, const LowerOptions& options);

  Kernel run();

 private:
  // ---- kernels (Lowering.cpp) ----
  void pointwiseKernel();
  void reductionKernel();
  void gemmKernel();
  /// The GEMM of matmul (or linear) `n`, its operands kernel inputs, for
  /// the result's point `o` (in the kernel's loop variables), summing over
  /// variable kVar.
  Gemm gemmOf(const ir::Node& n, const Indices& o, int64_t kVar);
  /// softmax(epilogue(Q · K)) · V (KernelIR.h's Attention).
  void attentionKernel();
  bool isReduced(size_t d) const;

  // ---- values (Lowering.cpp) ----
  ExprPtr eval(const ir::Value* v, const Indices& idx);
  ExprPtr compute(const ir::Value* v, const Indices& idx);
  ExprPtr gemmAccumulator(const ir::Node& n, const Indices& idx, std::shared_ptr<Expr> e);
  ExprPtr reduction(const ir::Node& n, const Indices& idx);
  static bool sameIndex(const Indices& a, const Indices& b);
  /// The operand index a shape op reads for result index `idx` (a slice
  /// from a negative start of a symbolic dim adds its minimum size to k_).
  Indices shapeOpIndex(const ir::Node& n, const Indices& idx);

  // ---- windows (LowerWindows.cpp) ----
  /// A reduction kernel over the window op's output: its window loops are
  /// the inner loops, its epilogue the stores.
  void windowKernel();
  /// The inner loops of a window op: the kernel's reduceSizes.
  static std::vector<ir::Dim> windowLoops(const ir::Node& n);
  /// The window op's value at the outer loops' point.
  ExprPtr windowValue(const ir::Node& n);
  ExprPtr convolution(const ir::Node& n);
  ExprPtr transposedConvolution(const ir::Node& n);
  ExprPtr convolutionSum(const ir::Node& n, ExprPtr input, ExprPtr weight, const IndexPtr& outChannel);
  /// Whether conv `n` can be a GEMM kernel (LowerOptions::convolutionsAsGemm),
  /// a pool among them where poolAsPlanesFits.
  bool convolutionAsGemmFits(const ir::Node& n) const;
  /// Whether pool `n` can run plane by plane (a 2-D f32 pool over a
  /// kernel input of static channels and spatial dims).
  bool poolAsPlanesFits(const ir::Node& n) const;
  /// A GEMM kernel for the conv (Gemm::conv); the stores are its epilogue.
  void convolutionGemmKernel();
  /// The conv's value at the outer point in such a kernel: the GEMM's
  /// accumulator plus the bias.
  ExprPtr convolutionAccumulator(const ir::Node& n, const Indices& idx, std::shared_ptr<Expr> e);
  ExprPtr pooling(const ir::Node& n);
  ExprPtr cumulativeSum(const ir::Node& n);
  /// x read at a window position that may fall in the padding: `pad` there.
  ExprPtr paddedRead(const ir::Value* x, Indices idx, const Indices& guarded, const Indices& sizes, double pad);

  // ---- computed indices and iota (LowerIndexing.cpp) ----
  ExprPtr indexed(const ir::Node& n, const Indices& idx);
  ExprPtr resized(const ir::Node& n, const Indices& idx);
  ExprPtr iota(const ir::Node& n, const Indices& idx);

  const ir::Node& fused_;
  const ir::Region& body_;
  const LowerOptions options_;
  Kernel k_;
  std::unordered_map<const ir::Value*, int> inputOf_;
  const ir::Node* reduction_ = nullptr;
  const ir::Node* matmul_ = nullptr;
  const ir::Node* window_ = nullptr;
  /// An attention kernel's: the product's point that holds the scores'
  /// point the loops are at (empty: the loops' own point).
  Indices accIndex_;
  size_t outerRank_ = 0;
  std::vector<int64_t> reduced_;
  std::unordered_map<std::string, ExprPtr> memo_;
};

}  // namespace graphc::codegen::kernel
