// The AVX-512 micro-kernels: 8 rows × 32 columns (two zmm registers per
// row: 16 accumulators, so the two FMA ports each have eight independent
// chains to cover the FMA latency; 8 rows divide the channel counts and
// sequence lengths models use, where a 12-row block wastes a third of a
// 16-channel layer), and for convolutions with few output channels 8 × 16
// (one zmm) and 8 × 8 (one ymm). Compiled with -mavx512f -mavx512vl -mfma
// (runtime/CMakeLists.txt).
#include "runtime/cpu/gemm/MicroKernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace graphc::runtime::cpu::gemm {

namespace avx512 {
struct Zmm {
  using type = __m512;
  static constexpr int width = 16;
  static type zero() { return _mm512_setzero_ps(); }
  static type load(const float* p) { return _mm512_loadu_ps(p); }
  static type broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static type fma(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
  static type add(type a, type b) { return _mm512_add_ps(a, b); }
  static type sub(type a, type b) { return _mm512_sub_ps(a, b); }
  static void store(float* p, type v) { _mm512_storeu_ps(p, v); }
  /// exp(x) for x ≤ 0 or NaN: Ymm::expNonPositive's, 2^n by scalef.
  static type expNonPositive(type x) {
    const type lowest = _mm512_set1_ps(-87.33654475055310898657f);
    const type clamped = _mm512_max_ps(x, lowest);
    const type n = _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(1.4426950408889634f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    type r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693145751953125f), clamped);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(-1.428606765330187e-06f), r);
    type p = _mm512_set1_ps(1.0f / 5040);
    for (const float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f})
      p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
    const type result = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lowest, _CMP_NLT_UQ), _mm512_scalef_ps(p, n));
    return _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
  }
  /// max(acc, x), NaN wherever either is (Ymm::maxNan's rule).
  static type maxNan(type acc, type x) {
    return _mm512_mask_mov_ps(_mm512_max_ps(x, acc), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
  }
};
#include "runtime/cpu/gemm/MicroKernelImpl.h"
#include "runtime/cpu/gemm/VectorYmm.h"

void depthwise(int64_t tapCount, const float* image, int64_t channels, const int64_t* origins, int64_t count,
               const int64_t* taps, const float* weights, int width, float* out, int64_t ldo) {
  const __mmask16 mask = width >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << width) - 1);
  constexpr int kPositions = 8;  // independent accumulators: the FMA latency is covered
  int64_t q = 0;
  for (; q + kPositions <= count; q += kPositions) {
    __m512 acc[kPositions];
    for (int i = 0; i < kPositions; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t t = 0; t < tapCount; ++t) {
      const __m512 w = _mm512_maskz_loadu_ps(mask, weights + t * channels);
      for (int i = 0; i < kPositions; ++i)
        acc[i] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, image + (origins[q + i] + taps[t]) * channels), w, acc[i]);
    }
    for (int i = 0; i < kPositions; ++i) _mm512_mask_storeu_ps(out + (q + i) * ldo, mask, acc[i]);
  }
  for (; q < count; ++q) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t t = 0; t < tapCount; ++t)
      acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, image + (origins[q] + taps[t]) * channels),
                            _mm512_maskz_loadu_ps(mask, weights + t * channels), acc);
    _mm512_mask_storeu_ps(out + q * ldo, mask, acc);
  }
}
}  // namespace avx512

MicroKernels avx512MicroKernels() {
  using namespace avx512;
  static const MicroKernel wide = kernelOf<Zmm, 8, 2>("avx512", &depthwise, 16);
  static const MicroKernel one = kernelOf<Zmm, 8, 1>("avx512", &depthwise, 16);
  static const MicroKernel half = kernelOf<Ymm, 8, 1, Zmm>("avx512", &depthwise, 16);
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl")) return {};
  return {&wide, &one, &half};
}

}  // namespace graphc::runtime::cpu::gemm

#else  // not x86-64: no such kernels

namespace graphc::runtime::cpu::gemm {
MicroKernels avx512MicroKernels() { return {}; }
}  // namespace graphc::runtime::cpu::gemm

#endif
