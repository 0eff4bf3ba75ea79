// GEMM with a fused epilogue on the CPU backend. The output is computed in
// tiles (a block of rows × a block of columns of one batch index) by the
// micro-kernel of gemm/MicroKernel.h on packed operands, and the kernel's
// epilogue (bias, activation, residual: the rest of a matmul_epilogue or
// convolution kernel) runs on each tile right after, while it is still in
// the core's cache, so no extra pass over the output is made. Tiles are
// spread over the thread pool.
//
// Operands that are constants (a linear's weight, a convolution's filters)
// are packed once, when the graph is compiled (packWeights), in the
// micro-kernel's panel layout; the others are packed per call, once per
// call for B (before the tiles, when several row blocks share it) and per
// tile for A. A convolution is computed transposed, as the GEMM
// im2col(x)ᵀ · Wᵀ per image — output positions as the kernel's rows, output
// channels as its columns — by the indirect kernel, which reads each
// position's window straight from the zero-bordered image (so any stride,
// dilation or padding costs nothing, and no im2col is written); each tile
// is transposed back to the NCHW layout before its epilogue.
//
// f64 GEMMs go to OpenBLAS's dgemm, tile by tile with the same epilogue.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "ir/DType.h"
#include "ir/Mx.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cpu/gemm/Packing.h"

namespace graphc::runtime::cpu {

/// One operand's matrices (`matrices` of `rows` × `cols`, back to back in
/// the source) packed for the host's micro-kernel: A in MR-row panels, B
/// in NR-column panels.
struct PackedWeights {
  std::vector<float> data;
  int64_t sourceFloats = 0;  // one source matrix: rows · cols
  int64_t packedFloats = 0;  // one packed matrix
  /// The packed matrix whose source starts `offset` floats into the operand.
  const float* matrix(int64_t offset) const { return data.data() + offset / sourceFloats * packedFloats; }
};

/// Packs an A operand ([matrices, m, k] row-major) in panels of
/// `panelRows` rows.
PackedWeights packWeightsA(const float* a, int64_t matrices, int64_t m, int64_t k, int panelRows);
/// Packs a convolution's filters [m, k] for its GEMM: a pointwise one's
/// as a plain GEMM's A (MR-row panels); any other's for
/// gemm::convolutionKernel(m / groups), group by group (each group's
/// m / groups rows in panels of their own, packedFloats(m / groups, k, nr)
/// apart).
PackedWeights packFilters(const float* w, int64_t m, int64_t k, const gemm::ConvGeometry& conv);
/// A depthwise convolution's filters [channels, taps] in the layout its
/// kernel reads: as they are for one run plane by plane, else transposed
/// to [taps, channels].
PackedWeights packDepthwiseFilters(const float* w, int64_t channels, int64_t taps, const gemm::ConvGeometry& conv);
/// A transposed convolution's filters [channels, outChannels, ∏kernel] as
/// the A operand Wᵀ [outChannels · ∏kernel, channels].
PackedWeights packTransposedFilters(const float* w, int64_t channels, int64_t rows);
/// Packs a B operand: [matrices, k, n], or [matrices, n, k] when transposed.
PackedWeights packWeightsB(const float* b, int64_t matrices, int64_t k, int64_t n, bool transposed);

/// A weight held in an MX (or f16/bf16) format, rearranged once when the
/// Executable is built into the order of the packed panels the GEMM reads
/// (packWeightsA/packWeightsB's: a stored row — each k values — is an A row
/// or a B column; panel g holds rows [g·panel, g·panel + panel) as
/// k × panel): one code per byte (two bytes for f16/bf16), and each block's
/// scale per row as a float. Decoding it on a call is then one contiguous
/// pass — a table lookup and a multiply per value — into the panels, with
/// the same values mxDequantize gives, so the same GEMM results.
struct MxPanels {
  ir::MxFormat format = ir::MxFormat::E4M3;
  int panel = 0;
  int64_t rows = 0, k = 0, panels = 0, blocks = 0;
  std::vector<uint8_t> codes;  // [panels][k][panel] (×2 bytes for f16/bf16)
  std::vector<float> scales;   // [panels][blocks][panel]
  /// Decodes every panel into `out` (reused from call to call).
  void decode(PackedWeights& out, ThreadPool& pool) const;
};
/// A linear's or matmul's B (stored [n, k]) in the micro-kernel's NR panels.
MxPanels packMxWeightsB(const ir::MxWeights& mx);
/// A convolution's filters [m, k] (groups 1) in the panels packFilters
/// puts them in.
MxPanels packMxFilters(const ir::MxWeights& mx, const gemm::ConvGeometry& conv);

/// C[b] = A[b] · B[b] (B transposed for linear), row-major, for every batch
/// index b; the batch dims' broadcasting is in the offsets.
struct GemmProblem {
  ir::DType dtype = ir::DType::F32;  // F32, or F64 (dgemm)
  const void* a = nullptr;
  const void* b = nullptr;
  int64_t m = 0, n = 0, k = 0;
  bool transposeB = false;                  // B is [n, k]
  std::vector<int64_t> aOffsets, bOffsets;  // per batch index, in elements
  const PackedWeights* packedA = nullptr;   // f32: A packed at compile time
  const PackedWeights* packedB = nullptr;   // f32: B packed at compile time
  /// An operand held in an MX format (an exported package's weight):
  /// decoded into packed panels on each call (as packedA/packedB are packed
  /// at load); a and b are then not read.
  /// mxB: a linear's or matmul's B; mxA: a convolution's filters.
  const MxPanels* mxA = nullptr;
  const MxPanels* mxB = nullptr;
  /// A convolution: B is the im2col of image b (b + bOffsets[b]), A the
  /// filters [m, k] (k per group); C[b] is image b's output [m, positions].
  const gemm::ConvGeometry* conv = nullptr;
  /// A transposed convolution: A is Wᵀ [m = outChannels · ∏kernel, k =
  /// channels], B image b [k, n = ∏in]; the epilogue sees the output
  /// [outChannels, ∏out] of each image.
  const gemm::ConvTransposeGeometry* convTranspose = nullptr;
};

/// Runs on outer points [begin, end) of the flattened output (batch index,
/// row, column), with `acc` the tile's GEMM result for those points.
using TileEpilogue = std::function<void(int64_t begin, int64_t end, const void* acc)>;

/// A GEMM's working buffers. Each calling thread keeps one
/// (GemmScratch::forThisThread) from call to call: allocating them afresh
/// costs page faults on every run of a model.
struct GemmScratch {
  static GemmScratch& forThisThread();
  std::vector<float> packedB;        // B packed before the tiles
  std::vector<float> paddedImages;   // a convolution's images with their zero borders (depthwise: channels-last)
  std::vector<float> packedFilters;  // a convolution's filters, when not a constant
  PackedWeights mxPacked;            // an MX operand, dequantised and packed
  std::vector<std::vector<std::byte>> tiles;  // per pool thread: the tile, packed A, packed B
};

/// Computes every tile and calls `epilogue` on it.
void gemmWithEpilogue(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool);

}  // namespace graphc::runtime::cpu
