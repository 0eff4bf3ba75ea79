// The portable micro-kernel (any CPU, any compiler flags): 4 × 8 scalar
// accumulators, which the compiler keeps in registers and vectorises as
// far as the baseline instruction set allows. What runs where neither
// AVX2 nor AVX-512 is there; and the choice of the host's kernels.
#include <cmath>

#include "runtime/cpu/gemm/MicroKernel.h"

namespace graphc::runtime::cpu::gemm {

namespace generic {
struct Scalar {
  using type = float;
  static constexpr int width = 1;
  static type zero() { return 0.0f; }
  static type load(const float* p) { return *p; }
  static type broadcast(const float* p) { return *p; }
  static type fma(type a, type b, type c) { return a * b + c; }
  static type add(type a, type b) { return a + b; }
  static type sub(type a, type b) { return a - b; }
  static void store(float* p, type v) { *p = v; }
  /// exp(x) for x ≤ 0 or NaN, 0 below ln(FLT_MIN) (as the vector ones).
  static type expNonPositive(type x) { return x < -87.33654475055310898657f ? 0.0f : std::exp(x); }
  /// max(acc, x), NaN wherever either is.
  static type maxNan(type acc, type x) { return x != x || x > acc ? x : acc; }
};
#include "runtime/cpu/gemm/MicroKernelImpl.h"

void depthwise(int64_t tapCount, const float* image, int64_t channels, const int64_t* origins, int64_t count,
               const int64_t* taps, const float* weights, int width, float* out, int64_t ldo) {
  for (int64_t q = 0; q < count; ++q)
    for (int j = 0; j < width; ++j) {
      float acc = 0.0f;
      for (int64_t t = 0; t < tapCount; ++t)
        acc += image[(origins[q] + taps[t]) * channels + j] * weights[t * channels + j];
      out[q * ldo + j] = acc;
    }
}
}  // namespace generic

MicroKernels genericMicroKernels() {
  static const MicroKernel kernel = generic::kernelOf<generic::Scalar, 4, 8>("generic", &generic::depthwise, 8);
  return {&kernel};
}

const MicroKernels& hostMicroKernels() {
  static const MicroKernels chosen = [] {
    if (MicroKernels k = avx512MicroKernels(); !k.empty()) return k;
    if (MicroKernels k = avx2MicroKernels(); !k.empty()) return k;
    return genericMicroKernels();
  }();
  return chosen;
}

const MicroKernel& hostMicroKernel() { return *hostMicroKernels().front(); }

const MicroKernel& convolutionKernel(int64_t channels) {
  const MicroKernels& all = hostMicroKernels();
  const MicroKernel* best = all.front();
  for (const MicroKernel* k : all)
    if (k->nr >= channels) best = k;  // widest first: the last that holds them is the narrowest
  return *best;
}

}  // namespace graphc::runtime::cpu::gemm
