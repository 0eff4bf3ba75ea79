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
  static type add(type a, type b) { return _mm256_add_ps(a, b); }
  static type sub(type a, type b) { return _mm256_sub_ps(a, b); }
  static void store(float* p, type v) { _mm256_storeu_ps(p, v); }
  /// exp(x) for x ≤ 0 or NaN, as the cpu kernels' expF32: x = n·ln2 + r,
  /// a degree-7 polynomial in r times 2^n; 0 below ln(FLT_MIN), so that
  /// no step is subnormal.
  static type expNonPositive(type x) {
    const type lowest = _mm256_set1_ps(-87.33654475055310898657f);
    const type clamped = _mm256_max_ps(x, lowest);  // (NaN becomes lowest here, and NaN again below)
    const type n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.4426950408889634f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    type r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693145751953125f), clamped);  // ln2's high bits: n·hi is exact
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-1.428606765330187e-06f), r);
    type p = _mm256_set1_ps(1.0f / 5040);
    for (const float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f})
      p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const type result =
        _mm256_andnot_ps(_mm256_cmp_ps(x, lowest, _CMP_LT_OQ), _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
    return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  /// max(acc, x), NaN wherever either is (max_ps alone returns its second
  /// operand when one is NaN: acc, so x's NaN is put back).
  static type maxNan(type acc, type x) {
    return _mm256_blendv_ps(_mm256_max_ps(x, acc), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
};
