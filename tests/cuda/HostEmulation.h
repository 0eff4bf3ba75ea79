// Running generated CUDA kernels on the host, one thread at a time, so that
// CI (no GPU) checks what they compute and not only that they compile. The
// module's device preamble is swapped for host definitions of the same
// helpers (f16/bf16 through runtime/Half.h, a one-thread block_reduce),
// CUDA's keywords become nothing, and the module is built with the host C++
// compiler into a shared library with one `graphc_launch_<kernel>(void**
// args)` wrapper per kernel. blockDim = gridDim = 1, so every grid-stride
// loop covers its whole range in one thread: the index maps, the ops, the
// casts, the vector path and the per-row reduction structure are what get
// tested. Not covered: GEMM kernels (their tiles need 256 cooperating
// threads) and the device helpers themselves (warp shuffles, PTX cvt, mma),
// which only a GPU runs (tests/cuda/CudaBackendTest.cpp).
#pragma once

#include <string>
#include <vector>

namespace graphc::testing {

inline constexpr const char* kHostPreamble = R"HOST(
// ---- host emulation preamble (tests/cuda/HostEmulation.h) ----
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "runtime/Half.h"

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
#define __align__(n) alignas(n)
#define __syncthreads() ((void)0)

typedef long long i64;
typedef unsigned long long u64;
struct graphc_dim3 { unsigned x, y, z; };
static const graphc_dim3 blockIdx{0, 0, 0}, threadIdx{0, 0, 0}, gridDim{1, 1, 1}, blockDim{1, 1, 1};
struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline i64 max(i64 a, i64 b) { return a > b ? a : b; }
inline i64 min(i64 a, i64 b) { return a < b ? a : b; }

namespace gc {
inline float f16_to_f32(unsigned short h) { return graphc::runtime::f16ToFloat(h); }
inline unsigned short f32_to_f16(float f) { return graphc::runtime::floatToF16(f); }
inline float bf16_to_f32(unsigned short b) { return graphc::runtime::bf16ToFloat(b); }
inline unsigned short f32_to_bf16(float f) { return graphc::runtime::floatToBf16(f); }
inline float round_f16(float x) { return f16_to_f32(f32_to_f16(x)); }
inline float round_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }
inline float inf_f32() { return std::numeric_limits<float>::infinity(); }
inline float nan_f32() { return std::numeric_limits<float>::quiet_NaN(); }
inline double inf_f64() { return std::numeric_limits<double>::infinity(); }
inline double nan_f64() { return std::numeric_limits<double>::quiet_NaN(); }
template <typename T> T fmaximum(T a, T b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
template <typename T> T fminimum(T a, T b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
template <typename T> T float_to_int(double v, double lo, double hi) {
  if (v != v) return (T)0;
  if (v <= lo) return (T)lo;
  if (v >= hi) return (T)hi;
  return (T)v;
}
inline i64 float_to_i64(double v) {
  if (v != v) return 0;
  if (v <= -9223372036854775808.0) return std::numeric_limits<i64>::min();
  if (v >= 9223372036854775808.0) return std::numeric_limits<i64>::max();
  return (i64)v;
}
template <typename T, int N> struct alignas(sizeof(T) * N) Vec { T v[N]; };
struct Sum { template <typename T> T operator()(T a, T b) const { return a + b; } };
struct FMax { template <typename T> T operator()(T a, T b) const { return fmaximum(a, b); } };
struct FMin { template <typename T> T operator()(T a, T b) const { return fminimum(a, b); } };
struct IMax { template <typename T> T operator()(T a, T b) const { return a > b ? a : b; } };
struct IMin { template <typename T> T operator()(T a, T b) const { return a < b ? a : b; } };
template <typename T, typename F> T warp_reduce(T v, F) { return v; }
template <typename T, typename F> T block_reduce(T v, F, double*) { return v; }
inline void mma_bf16(float*, const unsigned*, const unsigned*) { std::abort(); }
inline void mma_f16(float*, const unsigned*, const unsigned*) { std::abort(); }
}  // namespace gc
)HOST";

/// A launch wrapper per `extern "C" __global__` function of `source`:
/// `graphc_launch_<name>(void** args)` calls it with *args[i] as parameter i.
inline std::string hostLaunchWrappers(const std::string& source) {
  std::string out;
  const std::string marker = "extern \"C\" __global__ void __launch_bounds__(256) ";
  for (size_t at = source.find(marker); at != std::string::npos; at = source.find(marker, at + 1)) {
    const size_t nameStart = at + marker.size();
    const size_t open = source.find('(', nameStart);
    const size_t close = source.find(')', open);
    const std::string name = source.substr(nameStart, open - nameStart);
    std::vector<std::string> types;
    std::string params = source.substr(open + 1, close - open - 1);
    for (size_t start = 0; start < params.size();) {
      size_t comma = params.find(", ", start);
      const std::string p = params.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      types.push_back(p.substr(0, p.rfind(' ')));
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    out += "extern \"C\" void graphc_launch_" + name + "(void** a) {\n  " + name + "(";
    for (size_t i = 0; i < types.size(); ++i)
      out += (i ? ", " : "") + std::string("*(") + types[i] + "*)a[" + std::to_string(i) + "]";
    out += ");\n}\n";
  }
  return out;
}

}  // namespace graphc::testing
