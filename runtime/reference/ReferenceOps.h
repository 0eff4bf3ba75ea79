// Kernels of the reference interpreter, grouped by op family. Each takes
// concrete operand tensors and the result shape the type rule gave.
#pragma once

#include <optional>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::runtime::reference {

/// Steps `index` to the next element of `sizes` in C order (an odometer:
/// the last dim fastest), wrapping to all zeros after the last.
inline void nextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  for (size_t d = sizes.size(); d-- > 0;) {
    if (++index[d] < sizes[d]) return;
    index[d] = 0;
  }
}

/// Calls visit(i, src) for each element i (C order) of `shape`, where
/// src = offset + Σ index[k] * strides[k]: the one strided walk behind
/// broadcasting and the shape ops.
template <typename Visit>
void forEachStrided(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t offset,
                    Visit visit) {
  const size_t rank = shape.size();
  const int64_t n = checkedNumel(shape);
  std::vector<int64_t> counter(rank, 0);
  int64_t src = offset;
  for (int64_t i = 0; i < n; ++i) {
    visit(i, src);
    for (size_t k = rank; k-- > 0;) {  // odometer increment
      if (++counter[k] < shape[k]) {
        src += strides[k];
        break;
      }
      src -= strides[k] * (counter[k] - 1);
      counter[k] = 0;
    }
  }
}

/// Maps each element of `out` (C order) to the element of `in` it reads
/// under NumPy broadcasting.
std::vector<int64_t> broadcastIndices(const std::vector<int64_t>& out, const std::vector<int64_t>& in);

/// `v` rounded to what an element of dtype `t` holds (Tensor's setDouble
/// rules: round to nearest for floats, the cast rules for integers).
double roundTo(ir::DType t, double v);

/// One pointwise op on float scalars, in f64, with the semantics of
/// `pointwise` (code that evaluates kernels element by element shares it).
double pointwiseScalar(ir::OpId op, const ir::AttrMap& attrs, const std::vector<double>& args);

/// fmod, remainder or floor_divide on integers, b ≠ 0: C's truncating
/// quotient corrected toward the floor; -2^63 / -1 wraps. (The interpreter
/// reports a zero divisor; compiled kernels give 0 for it.)
int64_t divideIntegers(ir::OpId op, int64_t a, int64_t b);

Tensor pointwise(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape);
Tensor reduction(const ir::Node& n, const Tensor& x, const std::vector<int64_t>& shape);
/// argmax/argmin: the first index of the extremum along `dim` (NaN counts as one).
Tensor argReduction(const ir::Node& n, const Tensor& x, const std::vector<int64_t>& shape);
Tensor cumulativeSum(const ir::Node& n, const Tensor& x);
Tensor softmax(const ir::Node& n, const Tensor& x);
/// layer_norm, batch_norm, group_norm.
Tensor normalization(const ir::Node& n, const std::vector<Tensor>& operands);
/// conv, conv_transpose, max_pool, avg_pool.
Tensor window(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape);
/// torch.matmul's view of its operands: a vector is a 1-row (a) or
/// 1-column (b) matrix, batch dims broadcast; per batch index of the result,
/// the element offset of its A and B matrices (shared with the cpu GEMM).
struct MatmulLayout {
  int64_t m, k, n;
  std::vector<int64_t> aOffsets, bOffsets;
};
MatmulLayout matmulLayout(std::vector<int64_t> aShape, std::vector<int64_t> bShape);

Tensor matmul(const Tensor& a, const Tensor& b, const std::vector<int64_t>& shape);

/// eigh's input check, the same on every backend: the first matrix of the
/// batch with a NaN or Inf in the triangle eigh reads (`uplo`), if any, and
/// the error that reports it.
std::optional<int64_t> firstNonFiniteMatrix(const Tensor& a, char uplo);
ir::Error nonFiniteEighInput(int64_t batchIndex);
Tensor linear(const std::vector<Tensor>& operands, const std::vector<int64_t>& shape);
std::vector<Tensor> eigh(const ir::Node& n, const Tensor& a);
/// grouped_mm: rows [offs[g-1], offs[g]) of x times w[g]; rows past the
/// last offset are zero. Offsets that decrease are an error.
Tensor groupedMm(const ir::Node& n, const Tensor& x, const Tensor& w, const Tensor& offs);
/// solve_triangular: X with A X = B for each matrix of the batch, by
/// substitution in f64 (no singularity check: a zero pivot gives inf or
/// NaN, as LAPACK's trsm does).
Tensor solveTriangular(const ir::Node& n, const Tensor& a, const Tensor& b);
Tensor shapeOp(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<int64_t>& shape);
/// constant, full, iota.
Tensor creation(const ir::Node& n, ir::DType dtype, const std::vector<int64_t>& shape);

}  // namespace graphc::runtime::reference
