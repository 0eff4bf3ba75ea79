// The helpers every generated CUDA module starts with (see CudaEmitter.h).
#pragma once

namespace graphc::codegen::cuda {

inline constexpr const char* kPreamble = R"CUDA(
// ---- graphc CUDA preamble: helpers every generated module starts with ----
// No headers: NVRTC compiles this without the toolkit's include directory.
typedef long long i64;
typedef unsigned long long u64;

namespace gc {

// f16 through PTX cvt; bf16 in software, rounding to nearest even with NaN
// kept quiet (bit-identical to the cpu backend and ir/Half.h).
__device__ __forceinline__ float f16_to_f32(unsigned short h) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
  return r;
}
__device__ __forceinline__ unsigned short f32_to_f16(float f) {
  unsigned short r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}
__device__ __forceinline__ float bf16_to_f32(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }
__device__ __forceinline__ unsigned short f32_to_bf16(float f) {
  const unsigned bits = __float_as_uint(f);
  if (f != f) return (unsigned short)((bits >> 16) | 0x40u);
  return (unsigned short)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ float round_f16(float x) { return f16_to_f32(f32_to_f16(x)); }
__device__ __forceinline__ float round_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

__device__ __forceinline__ float inf_f32() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float nan_f32() { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double inf_f64() { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ double nan_f64() { return __longlong_as_double(0x7ff8000000000000ll); }

// torch.maximum/minimum and amax/amin: NaN propagates.
template <typename T> __device__ __forceinline__ T fmaximum(T a, T b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
template <typename T> __device__ __forceinline__ T fminimum(T a, T b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }

// float → integer: saturating, NaN → 0 (Tensor::setDouble's rule).
template <typename T> __device__ __forceinline__ T float_to_int(double v, double lo, double hi) {
  if (v != v) return (T)0;
  if (v <= lo) return (T)lo;
  if (v >= hi) return (T)hi;
  return (T)v;
}
__device__ __forceinline__ i64 float_to_i64(double v) {
  if (v != v) return 0;
  if (v <= -9223372036854775808.0) return (i64)0x8000000000000000ull;
  if (v >= 9223372036854775808.0) return 0x7fffffffffffffffll;
  return (i64)v;
}

// index_select / gather: a loaded index, negative from the end, clamped
// into [0, n) (codegen::kernel::wrapIndex).
__device__ __forceinline__ i64 wrap_index(i64 i, i64 n) {
  if (i < 0) i += n;
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}
// A window position clamped into its buffer, and whether it was inside.
__device__ __forceinline__ i64 clamp_index(i64 i, i64 n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }
__device__ __forceinline__ bool in_bounds(i64 i, i64 n) { return i >= 0 && i < n; }

// torch.remainder and torch.floor_divide on floats (c10's
// div_floor_floating), and fmod, remainder and floor division on integers:
// the truncating quotient corrected toward the floor, a zero divisor
// giving 0 and the minimum divided by -1 wrapping (the reference's rules).
__device__ __forceinline__ float c_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double c_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float c_floor(float a) { return floorf(a); }
__device__ __forceinline__ double c_floor(double a) { return floor(a); }
__device__ __forceinline__ float c_copysign(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double c_copysign(double a, double b) { return copysign(a, b); }
template <typename T> __device__ __forceinline__ T float_remainder(T a, T b) {
  const T r = c_fmod(a, b);
  return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}
template <typename T> __device__ __forceinline__ T float_floor_divide(T a, T b) {
  if (b == 0) return a / b;
  const T mod = c_fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return c_copysign((T)0, a / b);
  T floored = c_floor(div);
  if (div - floored > (T)0.5) floored += 1;
  return floored;
}
template <typename T> __device__ __forceinline__ T int_fmod(T a, T b) { return (b == 0 || b == -1) ? (T)0 : (T)(a % b); }
template <typename T> __device__ __forceinline__ T int_remainder(T a, T b) {
  const T r = int_fmod<T>(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
template <typename T> __device__ __forceinline__ T int_floor_divide(T a, T b) {
  if (b == 0) return (T)0;
  if (b == -1) return (T)(0ull - (u64)a);
  const T q = (T)(a / b), r = (T)(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;
}

template <typename T, int N> struct alignas(sizeof(T) * N) Vec { T v[N]; };

// MX operands (ir/Mx.h): element i of a row packed low bits first (mx_code),
// an f16/bf16 element's bits (mx_u16), a block's E8M0 scale as a float
// (2^(s - 127); 0xFF is NaN), and an element's value — its table entry
// times its scale, the f32 product the cpu backend computes.
__device__ __forceinline__ unsigned mx_code(const unsigned char* row, int bits, i64 i) {
  const i64 bit = i * bits;
  unsigned word = row[bit >> 3];
  if ((int)(bit & 7) + bits > 8) word |= (unsigned)row[(bit >> 3) + 1] << 8;
  return (word >> (bit & 7)) & ((1u << bits) - 1u);
}
__device__ __forceinline__ unsigned short mx_u16(const unsigned char* row, i64 i) {
  return (unsigned short)(row[2 * i] | ((unsigned)row[2 * i + 1] << 8));
}
__device__ __forceinline__ float mx_scale(unsigned char s) {
  return s == 255 ? nan_f32() : __uint_as_float(s == 0 ? 0x00400000u : (unsigned)s << 23);
}
__device__ __forceinline__ float mx_value(const unsigned* table, unsigned code, unsigned char scale) {
  return __uint_as_float(table[code]) * mx_scale(scale);
}

// Reductions: a fixed butterfly within the warp, then the warps' partials
// combined in warp order by every thread. No atomics: deterministic.
struct Sum { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct Prod { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };
struct FMax { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return fmaximum(a, b); } };
struct FMin { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return fminimum(a, b); } };
struct IMax { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; } };
struct IMin { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? a : b; } };

template <typename T, typename F> __device__ __forceinline__ T warp_reduce(T v, F f) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

template <typename T, typename F> __device__ __forceinline__ T block_reduce(T v, F f, double* scratch) {
  T* partial = reinterpret_cast<T*>(scratch);
  v = warp_reduce(v, f);
  __syncthreads();  // the previous reduction's readers are done with scratch
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = partial[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) r = f(r, partial[w]);
  return r;
}

// D = A·B + D on tensor cores, m16n8k16, f32 accumulators.
__device__ __forceinline__ void mma_bf16(float* d, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_f16(float* d, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace gc
)CUDA";

}  // namespace graphc::codegen::cuda
