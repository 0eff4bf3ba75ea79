// The GEMM micro-kernels of the cpu backend: one MR×NR block of C, every
// accumulator in a vector register for the whole k loop — BLIS's
// structure, and MLAS's and XNNPACK's. Two ways to read A:
//
//   run          a packed panel of A (k × MR, the MR rows interleaved);
//   runIndirect  A[i, p] = rows[i][offsets[p]]: a convolution's input read
//                in place (XNNPACK's indirect GEMM), each row an output
//                position's window in the padded image, so no im2col is
//                ever written; an attention kernel's Q and scores rows,
//                read where they lie;
//
// and B always a packed panel (k × NR); and a depthwise convolution,
// channels-last, a vector of channels at a time, or NCHW, a vector of
// output columns at a time; and a softmax row's max and exp. There is one implementation per
// instruction set, each compiled with that set's flags
// (MicroKernelAvx512.cpp, MicroKernelAvx2.cpp, MicroKernelGeneric.cpp, all
// from the templates in MicroKernelImpl.h); the host's kernels are picked
// from what the CPU reports (cpuid, through __builtin_cpu_supports). No
// environment variable takes part, so an override like OPENBLAS_CORETYPE
// cannot change which kernel runs or make it compute wrong results.
#pragma once

#include <cstdint>
#include <vector>

namespace graphc::runtime::cpu::gemm {

/// One channel of a 2-D depthwise convolution, NCHW, read from its padded
/// plane split by column phase: phase p's row r, column j holds the padded
/// plane's (r, j·sx + p) at `phases[p·phaseFloats + r·rowLength + j]`, so
/// every tap of every output row reads a contiguous run whatever the
/// stride. rowLength covers the output row rounded up to whole vectors
/// plus the window's reach.
struct DepthwisePlane {
  int64_t kh = 1, kw = 1, sy = 1, sx = 1, dy = 1, dx = 1;  // window, stride, dilation
  int64_t oh = 0, ow = 0;                                  // output rows, columns
  int64_t rowLength = 0, phaseFloats = 0;
  /// Where tap column kx reads from, relative to the output column's
  /// place in the row: its phase's offset plus (kx·dx) / sx.
  std::vector<int64_t> tapColumns;
};

struct MicroKernel {
  const char* isa;  // "avx512", "avx2", "generic"
  int mr, nr;       // the register block: mr rows × nr columns of C
  /// C[i, j] = Σ_p a[p·mr + i] · b[p·nr + j] for i < rows ≤ mr, j < cols ≤ nr,
  /// C's rows `ldc` floats apart (+= with `accumulate`: a later block of
  /// k). k = 0 stores zeros.
  void (*run)(int64_t k, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols, bool accumulate);
  /// The same with A[i, p] = rows[i][offsets[p]] (all mr row pointers valid).
  void (*runIndirect)(int64_t k, const float* const* rows, const int64_t* offsets, const float* b, float* c,
                      int64_t ldc, int nrows, int cols, bool accumulate);
  /// A depthwise convolution on a channels-last image (zero-bordered):
  /// out[q·ldo + j] = Σ_t image[(origins[q] + taps[t])·channels + j] ·
  /// weights[t·channels + j] for q < count, j < width ≤ the vector width,
  /// channels a vector at a time and several positions at once.
  void (*depthwise)(int64_t tapCount, const float* image, int64_t channels, const int64_t* origins, int64_t count,
                    const int64_t* taps, const float* weights, int width, float* out, int64_t ldo);
  int depthwiseWidth;  // the channels one depthwise call covers
  /// A 2-D depthwise convolution's one channel (DepthwisePlane): out[oy·ow
  /// + ox] = Σ_{ky, kx} weights[ky·kw + kx] · the padded plane's
  /// (oy·sy + ky·dy, ox·sx + kx·dx).
  void (*depthwisePlane)(const DepthwisePlane& plane, const float* phases, const float* weights, float* out);
  /// A 2-D max pool's one channel: out[oy·ow + ox] = the maximum over the
  /// window at (oy·sy, ox·sx) of the padded plane (−inf bordered), NaN
  /// where the window holds one.
  void (*maxPoolPlane)(const DepthwisePlane& plane, const float* phases, float* out);
  /// A softmax row's steps (an attention kernel's, runtime/cpu/Attention.h):
  /// the maximum of s[0..n) (−inf for n = 0, NaN where one is NaN); and
  /// s[j] = exp(s[j] − max) in place, returning Σ s[j] — exp as the cpu
  /// kernels compute it (0 where the result would be subnormal, so a
  /// masked score costs no subnormal arithmetic).
  float (*rowMax)(const float* s, int64_t n);
  float (*expAndSum)(float* s, int64_t n, float max);
};

/// An instruction set's kernels, widest columns first (the first is the
/// GEMM kernel; narrower ones serve convolutions with few channels).
using MicroKernels = std::vector<const MicroKernel*>;

/// The best kernels this CPU runs, chosen once.
const MicroKernels& hostMicroKernels();
/// The host's GEMM kernel: hostMicroKernels().front().
const MicroKernel& hostMicroKernel();
/// The host kernel for a convolution with `channels` output channels (its
/// columns): the narrowest whose nr holds them, else the widest.
const MicroKernel& convolutionKernel(int64_t channels);

/// Each instruction set's kernels, empty where this build or this CPU has
/// none (tests run every set the CPU has against the reference).
MicroKernels avx512MicroKernels();
MicroKernels avx2MicroKernels();
MicroKernels genericMicroKernels();

}  // namespace graphc::runtime::cpu::gemm
