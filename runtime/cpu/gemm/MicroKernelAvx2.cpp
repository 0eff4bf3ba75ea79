// The AVX2 micro-kernels: 6 rows × 16 columns (two ymm registers per row:
// 12 accumulators + 2 B vectors + 1 broadcast of the 16 ymm registers),
// and 8 × 8 (one ymm) for convolutions with few output channels.
// Compiled with -mavx2 -mfma (runtime/CMakeLists.txt).
#include "runtime/cpu/gemm/MicroKernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace graphc::runtime::cpu::gemm {

namespace avx2 {
struct Ymm {
  using type = __m256;
  static constexpr int width = 8;
  static type zero() { return _mm256_setzero_ps(); }
  static type load(const float* p) { return _mm256_loadu_ps(p); }
  static type broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static type fma(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, type v) { _mm256_storeu_ps(p, v); }
};
#include "runtime/cpu/gemm/MicroKernelImpl.h"
}  // namespace avx2

MicroKernels avx2MicroKernels() {
  using namespace avx2;
  static const MicroKernel wide{"avx2", 6, 16, &microKernel<Ymm, 6, 2>, &indirectKernel<Ymm, 6, 2>};
  static const MicroKernel one{"avx2", 8, 8, &microKernel<Ymm, 8, 1>, &indirectKernel<Ymm, 8, 1>};
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return {};
  return {&wide, &one};
}

}  // namespace graphc::runtime::cpu::gemm

#else  // not x86-64: no such kernels

namespace graphc::runtime::cpu::gemm {
MicroKernels avx2MicroKernels() { return {}; }
}  // namespace graphc::runtime::cpu::gemm

#endif
