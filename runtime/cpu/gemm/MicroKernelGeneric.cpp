// The portable micro-kernel (any CPU, any compiler flags): 4 × 8 scalar
// accumulators, which the compiler keeps in registers and vectorises as
// far as the baseline instruction set allows. What runs where neither
// AVX2 nor AVX-512 is there; and hostMicroKernel(), which picks the best.
#include <cmath>

#include "runtime/cpu/gemm/MicroKernel.h"

namespace graphc::runtime::cpu::gemm {

namespace generic {
struct Vec {
  using type = float;
  static constexpr int width = 1;
  static type zero() { return 0.0f; }
  static type load(const float* p) { return *p; }
  static type broadcast(const float* p) { return *p; }
  static type fma(type a, type b, type c) { return a * b + c; }
  static void store(float* p, type v) { *p = v; }
};
#include "runtime/cpu/gemm/MicroKernelImpl.h"
}  // namespace generic

const MicroKernel& genericMicroKernel() {
  static const MicroKernel kernel{"generic", 4, 8, &generic::microKernel<generic::Vec, 4, 8>};
  return kernel;
}

const MicroKernel& hostMicroKernel() {
  static const MicroKernel& chosen = []() -> const MicroKernel& {
    if (const MicroKernel* k = avx512MicroKernel()) return *k;
    if (const MicroKernel* k = avx2MicroKernel()) return *k;
    return genericMicroKernel();
  }();
  return chosen;
}

}  // namespace graphc::runtime::cpu::gemm
