// Packing for the GEMM micro-kernel (MicroKernel.h): the operands copied
// into the panel layouts the kernel reads sequentially. A packing routine
// is also where an operand's layout is absorbed: a transposed operand is
// just other strides. A convolution's image is not packed: the indirect
// kernel reads it in place, through the window origins and offsets below,
// from a copy with its zero border (padImage).
//
//   A (rows × k) in MR-row panels: panel g holds rows [g·MR, g·MR + MR) as
//   k × MR, row-interleaved, rows past the last one zero.
//   B (k × cols) in NR-column panels: panel j holds columns [j·NR, j·NR + NR)
//   as k × NR, columns past the last one zero.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/cpu/gemm/MicroKernel.h"

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

/// A pooling window run as a 2-D depthwise convolution is, plane by plane
/// (ConvGeometry's `pool`): the window's maximum (the border −inf), or its
/// sum over the divisor avg_pool's attributes give each output position.
struct PoolWindow {
  enum class Kind { None, Max, Average };
  Kind kind = Kind::None;
  std::vector<int64_t> padEnd;   // Average: where the padded input ends
  bool countIncludePad = false;  // Average: the padding counts in the divisor
};

/// A convolution as a GEMM per image: C[M, N] = W[M, K] · im2col(x)[K, N]
/// with K = C · ∏kernel (c, then the kernel dims, as the weight's row) and
/// N = ∏out (the output's spatial positions, row-major), so that C is the
/// image's NCHW output. With G groups, one such GEMM per group: group g's
/// M / G filters over its C / G channels (K = C / G · ∏kernel), its
/// windows `groupOffset(g)` floats further into the image. A depthwise
/// convolution (each output channel reads its own input channel) has
/// K = ∏kernel and a kernel of its own. Everything the run needs is
/// derived once, here.
class ConvGeometry {
 public:
  ConvGeometry(bool depthwise, int64_t groups, int64_t channels, std::vector<int64_t> in, std::vector<int64_t> out,
               std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> dilation,
               std::vector<int64_t> padBegin, PoolWindow pool = {});

  bool depthwise() const { return depthwise_; }
  const PoolWindow& pool() const { return pool_; }
  /// An average pool's divisor at output position (oy, ox) of a 2-D plane:
  /// how many of its window's points count (in the input, or with
  /// countIncludePad in the padded input), as torch counts them.
  float divisor(int64_t oy, int64_t ox) const { return static_cast<float>(counts_[0][oy] * counts_[1][ox]); }
  int64_t groups() const { return groups_; }  // 1 for depthwise
  int64_t channels() const { return channels_; }
  int64_t k() const { return static_cast<int64_t>(offsets_.size()); }  // C / G · ∏kernel, or ∏kernel
  /// Where group g's channels start in the padded image, in floats.
  int64_t groupOffset(int64_t g) const { return g * (channels_ / groups_) * paddedPlane(); }
  int64_t positions() const { return positions_; }      // ∏out
  int64_t imageFloats() const { return imageFloats_; }  // C · ∏in
  /// The input with its zero border: padBegin + in + what the last window
  /// reaches past the end, per spatial dim.
  const std::vector<int64_t>& padded() const { return padded_; }
  bool needsPadding() const { return padded_ != in_; }
  /// A 1×1 window at stride 1 without padding, groups 1: im2col(x) is the
  /// image itself ([C, positions], as NCHW lays it out), so the GEMM reads
  /// it as a plain B and writes NCHW as it stands.
  bool pointwise() const;
  int64_t paddedFloats() const { return paddedFloats_; }             // C · ∏padded
  int64_t paddedPlane() const { return paddedFloats_ / channels_; }  // ∏padded
  /// The offset of each reduction point (channel, kernel point: a row of
  /// the weight; depthwise, the kernel point only) from a window's origin
  /// in the padded image.
  const std::vector<int64_t>& offsets() const { return offsets_; }
  /// Where output position `position`'s window starts in the padded image.
  int64_t origin(int64_t position) const;
  /// Every position's origin(): floats into a padded image, or for a
  /// depthwise convolution, whose image is channels-last, positions.
  const std::vector<int64_t>& origins() const { return origins_; }

  /// A 2-D depthwise convolution whose output rows fill a vector or more,
  /// run NCHW plane by plane (MicroKernel::depthwisePlane) rather than
  /// channels-last (where a late layer's 7×7 planes still fill vectors).
  bool depthwiseByPlanes() const {
    return depthwise_ && in_.size() == 2 && (out_[1] >= 16 || pool_.kind != PoolWindow::Kind::None);
  }
  /// Its plane geometry, rows rounded up to whole vectors of `vectorWidth`.
  DepthwisePlane plane(int vectorWidth) const;
  /// One channel's input (∏in floats) with its border (`border`: zero, or
  /// −inf for a max pool), split by column phase as `g` lays it out, at
  /// `phases` (stride · g.phaseFloats floats).
  void padPlanePhases(const float* input, const DepthwisePlane& g, float* phases, float border) const;

  /// One image with its zero border at `out` (paddedFloats()).
  void padImage(const float* image, float* out) const;
  /// The same, channels-last: position p of the padded plane, channel c at
  /// out[p · channels + c] (what the depthwise kernel reads).
  void padImageChannelsLast(const float* image, float* out) const;

 private:
  /// Where the padded plane holds row `row` (row-major over the input's
  /// outer spatial dims) of one channel's input, in floats.
  int64_t paddedRowStart(int64_t row) const;

  bool depthwise_;
  int64_t groups_, channels_;
  PoolWindow pool_;
  std::vector<std::vector<int64_t>> counts_;  // an average pool's: per spatial dim, per output position
  std::vector<int64_t> in_, out_, kernel_, stride_, dilation_, padBegin_, padded_, offsets_;
  std::vector<int64_t> paddedStride_;  // per spatial dim, in the padded image
  int64_t positions_ = 1, imageFloats_ = 0, paddedFloats_ = 0;
  std::vector<int64_t> origins_;
};

/// A transposed convolution (groups 1) as a GEMM per image: col[M, N] =
/// Wᵀ[M, K] · x[K, N] with M = outChannels · ∏kernel, K = the input
/// channels and N = ∏in, then each column added into the output at
/// o = i·stride + k·dilation − pad (col2im).
class ConvTransposeGeometry {
 public:
  ConvTransposeGeometry(int64_t channels, int64_t outChannels, std::vector<int64_t> in, std::vector<int64_t> out,
                        std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> dilation,
                        std::vector<int64_t> padBegin);

  int64_t channels() const { return channels_; }
  int64_t outChannels() const { return outChannels_; }
  int64_t kernelPoints() const { return kernelPoints_; }
  int64_t inPositions() const { return inPositions_; }
  int64_t outPositions() const { return outPositions_; }

  /// out[c, o] = Σ col[c·∏kernel + k, i] over the (k, i) that land on o,
  /// for the `count` output channels whose rows `col` holds (inPositions()
  /// floats a row); out is count × outPositions().
  void col2im(const float* col, int64_t count, float* out) const;

 private:
  static constexpr size_t kRank = 3;  // spatial dims, padded with unit dims in front
  int64_t channels_, outChannels_, kernelPoints_ = 1, inPositions_ = 1, outPositions_ = 1;
  std::array<int64_t, kRank> in_{}, out_{}, kernel_{}, stride_{}, dilation_{}, padBegin_{};
};

}  // namespace graphc::runtime::cpu::gemm
