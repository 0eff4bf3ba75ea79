// Kernel IR → CUDA C++: the kernels of one Executable become one source
// module (one NVRTC program), each an `extern "C" __global__` function
// named by the compiler (k3_linear_add_relu; never an identifier from the
// input file: buffers are in0/out0, symbolic sizes s0, s1, ...).
//
// Launch contract of every kernel: its parameters are the input buffers,
// then the output buffers (device pointers), then one i64 per symbolic size
// (CudaKernel::symbols order), then the strategy's extents:
//
//   Pointwise           total                  grid-stride over the flattened
//                                              outer space; a 16-byte vector
//                                              path when the last dim and the
//                                              buffers' alignment allow it
//                                              (checked on the device), else
//                                              scalar
//   WarpPerRow          rows, rowLength        one warp per row (short rows)
//   BlockPerRow         rows, rowLength        one block per row; either holds
//                                              a static row of up to 16
//                                              elements per thread in registers
//   GemmSimt            batch, M, N, K         128×128 tiles, 8×8 per thread
//                                              (f32/f64 on CUDA cores)
//   GemmTensorCore      batch, M, N, K         128×128×32 tiles, mma.sync
//                                              m16n8k16 (f16/bf16, f32
//                                              accumulate; sm_80+)
//
// Semantics are the kernel IR's (what the cpu backend computes): values are
// rounded to their dtype after each op (f16/bf16 computed in f32),
// reductions accumulate floats in f64 and integers in i64 in a fixed order
// (per-thread strided partials, then a fixed shuffle/shared-memory tree: no
// atomics, so results are deterministic), integers wrap, float→int casts
// saturate with NaN → 0. The module is compiled without FMA contraction;
// the GEMM templates use fma() explicitly.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel/KernelIR.h"
#include "ir/Mx.h"

namespace graphc::codegen::cuda {

enum class Strategy { Pointwise, WarpPerRow, BlockPerRow, GemmSimt, GemmTensorCore };

const char* strategyName(Strategy s);

/// The module's decode table of an MX element format ("gc_mx_e2m1").
std::string mxTableName(ir::MxFormat f);

struct CudaKernel {
  std::string name;  // the __global__ function
  Strategy strategy = Strategy::Pointwise;
  std::vector<std::string> symbols;  // the graph's symbolic sizes, in parameter order
  int blockThreads = 256;
  int rowsPerBlock = 1;      // WarpPerRow: warps per block
  int tileM = 0, tileN = 0;  // GEMM tiles
  int vectorWidth = 1;       // Pointwise: elements per vector access (1: none)
  int rowChunks = 0;         // reductions: row elements per thread held in registers (0: re-read)
};

struct CudaModule {
  std::string source;
  std::vector<CudaKernel> kernels;  // in the order given
  bool hasConditions = false;       // the module defines graphc_set_condition
  bool hasTranspose = false;        // ... and graphc_transpose_f32/_f64, graphc_eigh_nonfinite_f32/_f64
};

/// The name of the one-thread kernel that sets a CUDA graph conditional
/// node's value from a device-side predicate (a bool tensor's first byte).
inline constexpr const char* kSetConditionKernel = "graphc_set_condition";

/// The in-place batched square transpose eigh's column-major eigenvectors
/// need: graphc_transpose_f32(T* m, i64 n, i64 batch), and _f64.
inline constexpr const char* kTransposeKernelPrefix = "graphc_transpose_";

/// eigh's input check, defined with the transposes:
/// graphc_eigh_nonfinite_f32(const T* a, i64 n, i64 batch, int lower,
/// int* info) sets info[b] to kEighNonFiniteInfo when matrix b has a NaN or
/// Inf in the triangle cuSOLVER read, as the cpu backends check on the host.
inline constexpr const char* kEighCheckKernelPrefix = "graphc_eigh_nonfinite_";
inline constexpr int kEighNonFiniteInfo = -2147483647 - 1;

struct EmitOptions {
  bool conditions = false;  // define kSetConditionKernel
  bool transpose = false;   // define the transpose and eigh check kernels
};

/// Emits every kernel into one module. Throws ir::Error for an expression
/// the backend cannot lower, or an MX input (kernel::Buffer::mx) a kernel
/// cannot read: only an f32 GEMM's weight, dequantised as the GemmSimt
/// template loads its B tile into shared memory (codegen/MxOperands.h).
CudaModule emitModule(const std::vector<const codegen::kernel::Kernel*>& kernels, const EmitOptions& options = {});

/// Whether kernel `k` can read input `input` held in an MX format
/// (codegen::MxReader): the B of an f32 GEMM (the GemmSimt template)
/// without a convolution, a static matrix.
bool readsMxInput(const codegen::kernel::Kernel& k, int input);

/// Which strategy a kernel gets (exposed for tests).
Strategy chooseStrategy(const codegen::kernel::Kernel& k);

}  // namespace graphc::codegen::cuda
