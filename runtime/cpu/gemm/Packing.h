// Packing for the GEMM micro-kernel (MicroKernel.h): the operands copied
// into the panel layouts the kernel reads sequentially. A packing routine
// is also where an operand's layout is absorbed: a transposed operand is
// just other strides, and a convolution's B operand is the im2col of the
// image, gathered straight into panels (an implicit GEMM: the im2col matrix
// is never written out whole).
//
//   A (rows × k) in MR-row panels: panel g holds rows [g·MR, g·MR + MR) as
//   k × MR, row-interleaved, rows past the last one zero.
//   B (k × cols) in NR-column panels: panel j holds columns [j·NR, j·NR + NR)
//   as k × NR, columns past the last one zero.
#pragma once

#include <cstdint>
#include <vector>

namespace graphc::runtime::cpu::gemm {

/// A matrix in memory: element (r, c) at data[r·rowStride + c·colStride].
struct MatrixView {
  const float* data = nullptr;
  int64_t rowStride = 0, colStride = 1;
};

/// Floats an operand takes packed: `count` rows (A) or columns (B) rounded
/// up to whole panels of `panel`, times k.
int64_t packedFloats(int64_t count, int64_t k, int panel);

/// Rows [row0, row0 + rows) of A (k columns) into MR-row panels at `out`.
void packA(MatrixView a, int64_t row0, int64_t rows, int64_t k, int mr, float* out);

/// Columns [col0, col0 + cols) of B (k rows) into NR-column panels at `out`.
void packB(MatrixView b, int64_t col0, int64_t cols, int64_t k, int nr, float* out);

/// A convolution (groups 1) as the GEMM W[M, K] · im2col(x)[K, N] per image:
/// K = C · ∏kernel (c, then the kernel dims, as the weight's row), N = ∏out
/// (the output's spatial positions, row-major), so that C[M, N] is the
/// image's NCHW output.
struct ConvGeometry {
  int64_t channels = 0;
  std::vector<int64_t> in, out, kernel, stride, dilation, padBegin;  // per spatial dim
  int64_t k() const;            // C · ∏kernel
  int64_t positions() const;    // ∏out
  int64_t imageFloats() const;  // C · ∏in
  /// The input with its zero border: padBegin + in + what the last window
  /// reaches past the end, per spatial dim.
  std::vector<int64_t> padded() const;
  bool needsPadding() const;
  int64_t paddedFloats() const;  // C · ∏padded
};

/// One image with its zero border (ConvGeometry::padded) at `out`.
void padImage(const float* image, const ConvGeometry& g, float* out);

/// Columns [col0, col0 + cols) of one image's im2col matrix into NR-column
/// panels at `out`. `image` is the padded image (padImage) when the
/// geometry needs padding, else the image itself: every read is inside it,
/// and a run of columns that are consecutive in the input (stride 1) is
/// one contiguous copy per row.
void packConvB(const float* image, const ConvGeometry& g, int64_t col0, int64_t cols, int nr, float* out);

}  // namespace graphc::runtime::cpu::gemm
