// The GEMM micro-kernel of the cpu backend: one MR×NR block of C from a
// packed panel of A (k × MR, the MR rows interleaved) and a packed panel of
// B (k × NR), every accumulator in a vector register for the whole k loop
// — BLIS's structure, and MLAS's and XNNPACK's. There is one
// implementation per instruction set, each compiled with that set's flags
// (MicroKernelAvx512.cpp, MicroKernelAvx2.cpp, MicroKernelGeneric.cpp, all
// from the one template in MicroKernelImpl.h); hostMicroKernel() picks one
// from what the CPU reports (cpuid, through __builtin_cpu_supports). No
// environment variable takes part, so an override like OPENBLAS_CORETYPE
// cannot change which kernel runs or make it compute wrong results.
#pragma once

#include <cstdint>

namespace graphc::runtime::cpu::gemm {

struct MicroKernel {
  const char* isa;  // "avx512", "avx2", "generic"
  int mr, nr;       // the register block: mr rows × nr columns of C
  /// C[i, j] = Σ_p a[p·mr + i] · b[p·nr + j] for i < rows ≤ mr, j < cols ≤ nr,
  /// C's rows `ldc` floats apart. k = 0 stores zeros.
  void (*run)(int64_t k, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols);
};

/// The best kernel this CPU runs, chosen once.
const MicroKernel& hostMicroKernel();

/// Each instruction set's kernel, or nullptr where this build or this CPU
/// has none (tests run every one the CPU has against the reference).
const MicroKernel* avx512MicroKernel();
const MicroKernel* avx2MicroKernel();
const MicroKernel& genericMicroKernel();

}  // namespace graphc::runtime::cpu::gemm
