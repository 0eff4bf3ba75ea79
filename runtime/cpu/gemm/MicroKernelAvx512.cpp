// The AVX-512 micro-kernel: 8 rows × 32 columns (two zmm registers per
// row), 16 accumulators, so two FMA ports each have eight independent
// chains to cover the FMA latency. 8 rows divide the channel counts and
// sequence lengths the models use (a 12-row block wastes a third of a
// 16-channel layer). Compiled with -mavx512f -mfma (runtime/CMakeLists.txt).
#include "runtime/cpu/gemm/MicroKernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace graphc::runtime::cpu::gemm {

namespace avx512 {
struct Vec {
  using type = __m512;
  static constexpr int width = 16;
  static type zero() { return _mm512_setzero_ps(); }
  static type load(const float* p) { return _mm512_loadu_ps(p); }
  static type broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static type fma(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, type v) { _mm512_storeu_ps(p, v); }
};
#include "runtime/cpu/gemm/MicroKernelImpl.h"
}  // namespace avx512

const MicroKernel* avx512MicroKernel() {
  static const MicroKernel kernel{"avx512", 8, 32, &avx512::microKernel<avx512::Vec, 8, 2>};
  return __builtin_cpu_supports("avx512f") ? &kernel : nullptr;
}

}  // namespace graphc::runtime::cpu::gemm

#else  // not x86-64: no such kernel

namespace graphc::runtime::cpu::gemm {
const MicroKernel* avx512MicroKernel() { return nullptr; }
}  // namespace graphc::runtime::cpu::gemm

#endif
