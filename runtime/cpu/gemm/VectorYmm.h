// The 256-bit vector traits the micro-kernel templates take (MicroKernelImpl.h),
// shared by the AVX2 and AVX-512 files: each includes this inside its own
// namespace, compiled with its own target flags (so no definition is shared
// between differently compiled files). Needs <immintrin.h> and FMA.
//
// Included only by those files: no include guard on purpose, no namespace.

struct Ymm {
  using type = __m256;
  static constexpr int width = 8;
  static type zero() { return _mm256_setzero_ps(); }
  static type load(const float* p) { return _mm256_loadu_ps(p); }
  static type broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static type fma(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, type v) { _mm256_storeu_ps(p, v); }
  /// max(acc, x), NaN wherever either is (max_ps alone returns its second
  /// operand when one is NaN: acc, so x's NaN is put back).
  static type maxNan(type acc, type x) {
    return _mm256_blendv_ps(_mm256_max_ps(x, acc), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
};
