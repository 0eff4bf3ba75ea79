// The AVX2 micro-kernels: 6 rows × 16 columns (two ymm registers per row:
// 12 accumulators + 2 B vectors + 1 broadcast of the 16 ymm registers),
// and 8 × 8 (one ymm) for convolutions with few output channels.
// Compiled with -mavx2 -mfma (runtime/CMakeLists.txt).
#include "runtime/cpu/gemm/MicroKernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace graphc::runtime::cpu::gemm {

namespace avx2 {
#include "runtime/cpu/gemm/MicroKernelImpl.h"
#include "runtime/cpu/gemm/VectorYmm.h"

void depthwise(int64_t tapCount, const float* image, int64_t channels, const int64_t* origins, int64_t count,
               const int64_t* taps, const float* weights, int width, float* out, int64_t ldo) {
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(width), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  constexpr int kPositions = 8;
  int64_t q = 0;
  for (; q + kPositions <= count; q += kPositions) {
    __m256 acc[kPositions];
    for (int i = 0; i < kPositions; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t t = 0; t < tapCount; ++t) {
      const __m256 w = _mm256_maskload_ps(weights + t * channels, mask);
      for (int i = 0; i < kPositions; ++i)
        acc[i] = _mm256_fmadd_ps(_mm256_maskload_ps(image + (origins[q + i] + taps[t]) * channels, mask), w, acc[i]);
    }
    for (int i = 0; i < kPositions; ++i) _mm256_maskstore_ps(out + (q + i) * ldo, mask, acc[i]);
  }
  for (; q < count; ++q) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t t = 0; t < tapCount; ++t)
      acc = _mm256_fmadd_ps(_mm256_maskload_ps(image + (origins[q] + taps[t]) * channels, mask),
                            _mm256_maskload_ps(weights + t * channels, mask), acc);
    _mm256_maskstore_ps(out + q * ldo, mask, acc);
  }
}
}  // namespace avx2

MicroKernels avx2MicroKernels() {
  using namespace avx2;
  static const MicroKernel wide = kernelOf<Ymm, 6, 2>("avx2", &depthwise, 8);
  static const MicroKernel one = kernelOf<Ymm, 8, 1>("avx2", &depthwise, 8);
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return {};
  return {&wide, &one};
}

}  // namespace graphc::runtime::cpu::gemm

#else  // not x86-64: no such kernels

namespace graphc::runtime::cpu::gemm {
MicroKernels avx2MicroKernels() { return {}; }
}  // namespace graphc::runtime::cpu::gemm

#endif
