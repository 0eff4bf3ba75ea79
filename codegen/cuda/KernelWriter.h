// One kernel's CUDA C++ function, written statement by statement. The
// shared machinery — text, index expressions, the expression DAG as const
// temporaries, stores — is in KernelWriter.cpp; each launch strategy's
// loop structure in its own file: EmitPointwise.cpp, EmitReduction.cpp,
// EmitGemm.cpp (CudaEmitter.h has the launch contract of each).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "codegen/cuda/CudaEmitter.h"
#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::cuda {

using namespace codegen::kernel;

/// Emits one kernel's function. Statements go to a list of lines with
/// indentation; each expression becomes a const temporary (v0, v1, ...),
/// memoised in the innermost scope that computed it.
class KernelWriter {
 public:
  KernelWriter(const Kernel& k, CudaKernel& info);

  std::string run();

 private:
  // ---- text (KernelWriter.cpp) ----------------------------------------------

  template <typename... Args>
  void line(fmt::format_string<Args...> f, Args&&... args) {
    lines_.push_back(std::string(static_cast<size_t>(indent_) * 2, ' ') + fmt::format(f, std::forward<Args>(args)...));
  }
  void open(const std::string& head);
  void close();

  std::string fresh();

  /// The parameter list: buffers, symbols, then the strategy's extents.
  void signature(const std::vector<std::string>& extents);

  // ---- indices (KernelWriter.cpp) -------------------------------------------

  std::string dim(const ir::Dim& d);

  std::string index(const IndexPtr& e);

  std::string offset(const ir::TensorType& t, const std::vector<IndexPtr>& idx);

  /// Declares i<first>.. as the multi-index of `linear` over `dims`.
  void unravel(const std::string& linear, const std::vector<ir::Dim>& dims, size_t first,
               const std::string& prefix = "i");

  std::string product(const std::vector<ir::Dim>& dims);

  // ---- expressions (KernelWriter.cpp) ---------------------------------------

  std::string value(const ExprPtr& e);

  std::string define(DType t, const std::string& expr);

  std::string compute(const Expr& e);

  /// concat's piecewise read as if/else: a piece's index map is only in
  /// bounds inside its own range, so only the chosen piece is evaluated.
  std::string select(const Expr& e);

  static std::string mathFn(const char* name, bool f64);

  std::string floatUnary(const Expr& e, const std::string& x, bool f64);

  /// Integer arithmetic wraps in the dtype's width (through unsigned).
  static std::string wrapped(DType t, const std::string& a, const char* op, const std::string& b);

  std::string intUnary(const Expr& e, const std::string& x, DType t);

  static std::string nonZero(const std::string& v, DType t);

  /// Tensor::setDouble/setInt's conversion rules.
  std::string convert(const std::string& v, DType from, DType to);

  std::string op(const Expr& e);

  /// Computes every store's value first, then stores: an in-place kernel's
  /// output may be the buffer an input of the same point was read from.
  void stores(bool insideReduction, const std::string& guard = "");

  // ---- pointwise (EmitPointwise.cpp) ----------------------------------------

  bool isLastVar(const IndexPtr& i) const;

  /// Whether an access of `t` at `idx` is unit-stride along the last outer
  /// loop and lane-aligned: its last index is that loop's variable and its
  /// last dim is the loop's size.
  bool contiguous(const ir::TensorType& t, const std::vector<IndexPtr>& idx) const;

  static bool readsVar(const IndexPtr& i, int64_t v);

  /// The loads every point evaluates (not those inside a concat's pieces,
  /// which only some points may read) that are contiguous.
  void vectorLoads(const ExprPtr& e, std::vector<const Expr*>& out, std::unordered_set<const Expr*>& seen);

  void pointwise();

  // ---- row reductions (EmitReduction.cpp) -----------------------------------

  void reduction();

  /// Rows of a static length up to 16 elements per thread are held in
  /// registers: each load that reads the row's elements (outside a concat's
  /// pieces) is done once, into a per-thread array of rowChunks_ elements
  /// (chunk c is element lane + c·threads), and every reduction and store
  /// pass reads the array. Softmax then reads its input once, not three times.
  void planRowCache(const std::vector<const Expr*>& reduces, int threads);

  static bool readsVarFrom(const IndexPtr& i, int64_t first);

  /// A loop over the row's elements of this thread, binding the inner
  /// variables: strided, or (with a row cache) unrolled over the chunks,
  /// the cached loads bound to their registers.
  void openRowLoop(const std::string& threads, bool readCache = true);

  void closeRowLoop();

  /// One row's reduction: per-thread strided partials (floats in f64 for
  /// sum/mean, integers in i64), then the fixed tree. Every thread of the
  /// row ends with the value.
  std::string reduce(const Expr& e, bool warp, const std::string& threads);

  // ---- GEMM (EmitGemm.cpp) --------------------------------------------------

  /// Where the outer loops of a GEMM kernel come from: batch dims (grid z),
  /// row dims (flattened to M) and the column dim (N).
  struct GemmDims {
    std::vector<ir::Dim> batch, rows;
    bool hasCol = false;
    bool aHasRows = false;      // a is a matrix (else a vector: M = 1)
    bool bKContiguous = false;  // b's elements along k are adjacent (linear, or a vector)
  };

  GemmDims gemmDims() const;

  /// Element (row, k) of an MX weight in `buffer`, dequantised (an f32 expression).
  static std::string mxElement(const MxLayout& mx, const std::string& buffer, const std::string& row,
                               const std::string& k);

  /// An operand's element offset at the batch point with the row/column and
  /// k variables at 0 (its base for this batch point).
  std::string operandBase(const Buffer& b, const std::vector<IndexPtr>& idx, size_t batchRank);

  /// The epilogue at one accumulator element: binds the outer variables of
  /// (row, col) and stores every output.
  void epilogue(const GemmDims& d, const std::string& row, const std::string& col, const std::string& acc);

  void gemmPrologue(const GemmDims& d, std::string& aBase, std::string& bBase);

  void gemmSimt();

  /// f16/bf16 on tensor cores: 8 warps in 2×4, each 64×32 of the 128×128
  /// tile as 4×4 mma.sync m16n8k16 tiles; A row-major and B n-major in
  /// shared memory with k contiguous (rows padded by 8 halves, which spreads
  /// a fragment's reads over all 32 banks), 16-byte global loads where the
  /// layout and alignment allow (checked once per kernel) and prefetched a
  /// k-tile ahead into registers, scalar loads else.
  void gemmTensorCore();

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

}  // namespace graphc::codegen::cuda
