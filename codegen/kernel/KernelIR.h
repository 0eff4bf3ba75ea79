// The kernel (loop) IR: the form of one `fused` op that code generators
// consume. A kernel is a loop nest over an iteration space of (possibly
// symbolic) sizes; values are expressions over loop variables — loads
// through index maps, constants, pointwise ops, reductions over inner
// loops, and a GEMM accumulator for matmul kernels; results are stores.
//
//   kernel k0_linear_add_relu (matmul_epilogue)
//     in0: f32[B, 64]  in1: f32[128, 64]  in2: f32[128]
//     out0: f32[B, 128]
//     gemm acc[i0, i1] = sum k in [0, 64): in0[i0, k] * in1[i1, k]
//     for i0 in [0, B), i1 in [0, 128):
//       out0[i0, i1] = relu(add(acc, in2[i1]))
//
// Shape ops never appear: they are folded into index maps (reshape as
// div/mod of the linear index, permute as reordered variables, expand and
// broadcasting as 0, slice as start + step * i). index_select, gather and
// gather_nd become indirect indices: a dim indexed by a value the kernel
// loads. Window ops (conv, pooling, cumsum) are reductions over the window:
// a read that may fall in the padding is where(inbounds(...), load at the
// clamped index, pad value):
//
//   kernel k0_conv_relu (reduction)
//     in0: f32[1, 3, 8, 8]  in1: f32[4, 3, 3, 3]
//     out0: f32[1, 4, 8, 8]
//     for i0 in [0, 1), i1 in [0, 4), i2 in [0, 8), i3 in [0, 8):
//       t0 = sum over i4 in [0, 3), i5 in [0, 3), i6 in [0, 3):
//              mul(where(inbounds(i2 + i5 + -1 < 8, i3 + i6 + -1 < 8),
//                        in0[i0, i4, clamp(i2 + i5 + -1, 8), ...], 0.0), in1[i1, i4, i5, i6])
//       out0[i0, i1, i2, i3] = relu(t0)
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel/Index.h"
#include "ir/Graph.h"
#include "ir/KernelKind.h"
#include "ir/Mx.h"

namespace graphc::codegen::kernel {

using ir::AttrMap;
using ir::DType;
using ir::KernelKind;
using ir::OpId;
using ir::TensorType;

/// A value expression. Loop variables 0..outerRank-1 are the kernel's outer
/// loops; the reduction loop variables follow them.
struct Expr {
  /// Select: concat's piecewise choice — args[k] where index[0] < bounds[k]
  /// (the first bound that holds). InBounds: whether 0 ≤ index[k] <
  /// sizes[k] for every k (a bool). IndexValue: index[0]'s value as dtype
  /// (iota, resize's coordinates).
  enum class Kind { Load, Const, Op, Reduce, Acc, Select, InBounds, IndexValue };
  Kind kind = Kind::Const;
  DType dtype = DType::F32;
  int buffer = -1;              // Load: index into Kernel::inputs
  std::vector<IndexPtr> index;  // Load, Select, InBounds, IndexValue
  double value = 0;             // Const of a float dtype
  int64_t intValue = 0;         // Const of an integer or bool dtype: exact, in the dtype's range
  OpId op = OpId::Add;          // Op, Reduce (sum, mean, amax, amin, prod)
  AttrMap attrs;                // Op: e.g. cast's dtype, clamp's bounds
  std::vector<std::shared_ptr<const Expr>> args;
  std::vector<IndexPtr> bounds;  // Select: a symbolic bound where a piece has a symbolic size
  std::vector<IndexPtr> sizes;   // InBounds
};
using ExprPtr = std::shared_ptr<const Expr>;

/// How an input buffer holds a weight stored in an MX format or as
/// f16/bf16 (ir/Mx.h; an exported package's --weights): rows of `cols`
/// elements packed, blocks along the row, then (codegen/MxOperands.h) the
/// block scales. Element (r, c) of the stored matrix is logical element
/// r·cols + c, or c·rows + r when `transposed` (a matmul's B [k, n]).
struct MxLayout {
  ir::MxFormat format = ir::MxFormat::E4M3;
  int64_t rows = 0, cols = 0;
  bool transposed = false;
  bool operator==(const MxLayout&) const = default;
};

struct Buffer {
  std::string name;  // in0, out1: made by the compiler, never from the input file
  TensorType type;
  std::optional<MxLayout> mx;  // an input whose elements the kernel dequantises as it reads them
};

struct Store {
  /// An attention kernel's scores are stored into the accumulator tile
  /// they were computed in (Attention), not into an output.
  static constexpr int kScores = -1;
  int buffer;  // index into Kernel::outputs, or kScores
  std::vector<IndexPtr> index;
  ExprPtr value;
  bool insideReduction;  // stored per element of the reduced dims, not per row
};

/// A row reduction kernel reduces `reduceSizes` (inner loops) for every
/// point of the outer loops; a GEMM kernel computes `acc` for every point.
/// A convolution computed as a GEMM per image (the cpu backend's f32
/// convolutions): a holds the filters [M, K], b the images,
/// K = channels / groups · ∏kernel; C[n] = a · im2col(b[n]) is image n's
/// output [M, ∏out], group by group (group g's M / groups filters read its
/// channels only). A depthwise convolution (groups = channels = M) is the
/// same with each output channel reading only its own input channel,
/// K = ∏kernel, and `groups` left 1 (it has a kernel of its own).
/// A transposed convolution (conv_transpose, groups 1) is the GEMM
/// Wᵀ[M·∏kernel, channels] · x[channels, ∏in] per image, its columns then
/// added into the output at o = i·stride + k·dilation − pad (col2im).
/// The geometry is static (the batch may not be).
/// A pooling window run as a depthwise convolution is (the cpu backend's
/// 2-D f32 pools): each channel's plane on its own, the window's maximum,
/// or its sum over the divisor avg_pool's attributes say.
enum class PoolKind { None, Max, Average };

struct ConvAsGemm {
  bool depthwise = false, transposed = false;
  int64_t groups = 1;
  PoolKind pool = PoolKind::None;  // a pool: a and b both the image, no filters
  bool countIncludePad = false;    // Average: the padding counts in the divisor
  std::vector<int64_t> padEnd;     // Average: where the padded input ends (its divisor)
  int64_t channels = 0, outChannels = 0;
  std::vector<int64_t> in, out, kernel, stride, dilation, padBegin;  // per spatial dim
};

struct Gemm {
  int a = -1, b = -1;                    // input buffers
  bool transposeB = false;               // linear: b is [out, in]
  IndexPtr k;                            // contraction size
  std::vector<IndexPtr> aIndex, bIndex;  // in terms of the outer vars and var `kVar`
  int64_t kVar = 0;
  std::optional<ConvAsGemm> conv;  // a convolution: aIndex, bIndex unused
};

/// An attention kernel computes out0 = softmax(scores) · in[v], the
/// softmax over the scores' last dim (the keys), where the scores are the
/// kernel's one store: the epilogue of `gemm` (Q · K, with a scale, a mask,
/// a bias), stored back into the accumulator (Store::kScores). A backend
/// computes it a block of keys at a time with an online softmax, so the
/// score matrix is never stored whole. Outer loops: the scores' dims
/// [batch..., queries, keys]; out0 is [batch..., queries, dv].
struct Attention {
  int v = -1;  // input buffer: the values [..., keys, dv]
  /// torch's safe softmax (ir/AttentionPattern.h): zeros for a row whose
  /// softmax is NaN (every score −inf, or a NaN among them), or for a row
  /// whose scores are all −inf.
  bool nanRowsToZero = false, minusInfRowsToZero = false;
};

struct Kernel {
  std::string name;
  KernelKind kind = KernelKind::Pointwise;  // what the lowering built
  std::vector<Buffer> inputs, outputs;
  std::vector<Dim> outer;        // outer loop sizes
  std::vector<Dim> reduceSizes;  // inner (reduction) loop sizes; empty if none
  std::optional<Gemm> gemm;
  std::optional<Attention> attention;
  std::vector<Store> stores;
  /// Sizes a run must have for every read to stay inside its buffer: a
  /// slice from a negative start on a symbolic dim reads from S + start,
  /// so S must be at least -start (codegen::checkKernelSizes).
  struct MinimumSize {
    Dim size;
    int64_t atLeast = 0;
    bool operator==(const MinimumSize&) const = default;
  };
  std::vector<MinimumSize> minimumSizes;
};

/// A Const's text: an integer (or true/false) for integer and bool dtypes,
/// else a float that reads back as one ("2.0").
std::string constantText(const Expr& e);

/// The loop-nest text of a kernel (what `graphc compile --emit=kernels`
/// prints; Printer.cpp).
std::string print(const Kernel& k);

/// An expression on one line, without temporaries: an indirect index's
/// value in the text form.
std::string inlineText(const Expr& e);

}  // namespace graphc::codegen::kernel
