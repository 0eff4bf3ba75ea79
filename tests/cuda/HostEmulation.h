// Running generated CUDA kernels on the host, so that CI (no GPU) checks
// what they compute and not only that they compile. The module's device
// preamble is swapped for host definitions of the same helpers (f16/bf16
// through ir/Half.h), CUDA's keywords become host C++, and the module
// is built with the host compiler into a shared library with one
// `graphc_launch_<kernel>(void** args, unsigned threads)` wrapper per
// kernel, which runs one block (gridDim = 1, so every grid-stride loop
// covers its whole range):
//
//   threads = 1     pointwise kernels: the index maps, ops, casts and
//                   vector paths;
//   threads = 256   reductions and GEMMs, one host thread per CUDA thread:
//                   shared memory is shared, __syncthreads is a barrier,
//                   __shfl_xor_sync an exchange within the warp, and
//                   mma.sync is emulated per warp from the fragment layouts
//                   of the PTX ISA ("Matrix Fragments for mma.m16n8k16 with
//                   floating point type"): each lane posts its registers,
//                   the warp meets, and each lane computes its accumulators.
//
// Not covered: the device helpers that are PTX (cvt), which only a GPU runs
// (tests/cuda/CudaBackendTest.cpp).
#pragma once

#include <string>
#include <vector>

namespace graphc::testing {

inline constexpr const char* kHostPreamble = R"HOST(
// ---- host emulation preamble (tests/cuda/HostEmulation.h) ----
#include <algorithm>
#include <barrier>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>
#include <vector>
#include <cstdint>
#include <cstdlib>
#include <bit>
#include <cstring>
#include <limits>

#include "ir/Half.h"

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __syncthreads() graphc_host::sync()

typedef long long i64;
typedef unsigned long long u64;
struct graphc_dim3 { unsigned x, y, z; };
static const graphc_dim3 blockIdx{0, 0, 0}, gridDim{1, 1, 1};
inline thread_local graphc_dim3 threadIdx{0, 0, 0};
inline graphc_dim3 blockDim{1, 1, 1};

namespace graphc_host {
inline std::barrier<>* block = nullptr;
inline std::vector<std::unique_ptr<std::barrier<>>> warps;
inline void sync() {
  if (block) block->arrive_and_wait();
}
/// Runs `body` as one block of `threads` threads.
inline void run(unsigned threads, const std::function<void()>& body) {
  blockDim = {threads, 1, 1};
  if (threads == 1) {
    threadIdx = {0, 0, 0};
    body();
    return;
  }
  std::barrier<> b(threads);
  block = &b;
  warps.clear();
  for (unsigned w = 0; w < threads / 32; ++w) warps.push_back(std::make_unique<std::barrier<>>(32));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&body, t] {
      threadIdx = {t, 0, 0};
      body();
    });
  for (auto& t : pool) t.join();
  block = nullptr;
}
/// __shfl_xor_sync: each lane posts its value, the warp meets, each reads its partner's.
inline unsigned long long shuffleSlots[32][32];
template <typename T> T shuffleXor(T v, int offset) {
  static_assert(sizeof(T) <= 8);
  const unsigned w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  std::memcpy(&shuffleSlots[w][lane], &v, sizeof v);
  warps[w]->arrive_and_wait();
  T r;
  std::memcpy(&r, &shuffleSlots[w][lane ^ static_cast<unsigned>(offset)], sizeof r);
  warps[w]->arrive_and_wait();
  return r;
}
struct WarpRegisters { unsigned a[32][4]; unsigned b[32][2]; };
inline WarpRegisters warpRegisters[32];
/// mma.sync.m16n8k16.row.col with f32 accumulators, from the PTX ISA's layouts.
template <bool BF16> void mma(float* d, const unsigned* a, const unsigned* b) {
  const unsigned w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  WarpRegisters& x = warpRegisters[w];
  std::memcpy(x.a[lane], a, sizeof x.a[lane]);
  std::memcpy(x.b[lane], b, sizeof x.b[lane]);
  warps[w]->arrive_and_wait();
  auto element = [](unsigned reg, unsigned half) {
    const unsigned short bits = (unsigned short)(half ? reg >> 16 : reg & 0xffff);
    return BF16 ? graphc::ir::bf16ToFloat(bits) : graphc::ir::f16ToFloat(bits);
  };
  float A[16][16], B[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned group = l >> 2, tig = l % 4;
    for (unsigned i = 0; i < 8; ++i) {
      const unsigned row = (i < 2 || (i >= 4 && i < 6)) ? group : group + 8;
      const unsigned col = tig * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = element(x.a[l][i / 2], i & 1);
    }
    for (unsigned i = 0; i < 4; ++i) B[tig * 2 + (i & 1) + (i >= 2 ? 8 : 0)][group] = element(x.b[l][i / 2], i & 1);
  }
  warps[w]->arrive_and_wait();  // every lane has read the warp's registers
  const unsigned group = lane >> 2, tig = lane % 4;
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned row = i < 2 ? group : group + 8, col = tig * 2 + (i & 1);
    float sum = 0;
    for (unsigned k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
    d[i] += sum;
  }
}
}  // namespace graphc_host
struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline i64 max(i64 a, i64 b) { return a > b ? a : b; }
inline i64 min(i64 a, i64 b) { return a < b ? a : b; }

namespace gc {
inline float f16_to_f32(unsigned short h) { return graphc::ir::f16ToFloat(h); }
inline unsigned short f32_to_f16(float f) { return graphc::ir::floatToF16(f); }
inline float bf16_to_f32(unsigned short b) { return graphc::ir::bf16ToFloat(b); }
inline unsigned short f32_to_bf16(float f) { return graphc::ir::floatToBf16(f); }
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
inline i64 wrap_index(i64 i, i64 n) {
  if (i < 0) i += n;
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}
inline i64 clamp_index(i64 i, i64 n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }
inline bool in_bounds(i64 i, i64 n) { return i >= 0 && i < n; }
template <typename T> T float_remainder(T a, T b) {
  const T r = std::fmod(a, b);
  return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}
template <typename T> T float_floor_divide(T a, T b) {
  if (b == 0) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign((T)0, a / b);
  T floored = std::floor(div);
  if (div - floored > (T)0.5) floored += 1;
  return floored;
}
template <typename T> T int_fmod(T a, T b) { return (b == 0 || b == -1) ? (T)0 : (T)(a % b); }
template <typename T> T int_remainder(T a, T b) {
  const T r = int_fmod<T>(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
template <typename T> T int_floor_divide(T a, T b) {
  if (b == 0) return (T)0;
  if (b == -1) return (T)(0ull - (u64)a);
  const T q = (T)(a / b), r = (T)(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;
}
template <typename T, int N> struct alignas(sizeof(T) * N) Vec { T v[N]; };
inline unsigned mx_code(const unsigned char* row, int bits, i64 i) {
  const i64 bit = i * bits;
  unsigned word = row[bit >> 3];
  if ((int)(bit & 7) + bits > 8) word |= (unsigned)row[(bit >> 3) + 1] << 8;
  return (word >> (bit & 7)) & ((1u << bits) - 1u);
}
inline unsigned short mx_u16(const unsigned char* row, i64 i) {
  return (unsigned short)(row[2 * i] | ((unsigned)row[2 * i + 1] << 8));
}
inline float mx_scale(unsigned char s) {
  return s == 255 ? nan_f32() : std::bit_cast<float>(s == 0 ? 0x00400000u : (unsigned)s << 23);
}
inline float mx_value(const unsigned* table, unsigned code, unsigned char scale) {
  return std::bit_cast<float>(table[code]) * mx_scale(scale);
}
struct Sum { template <typename T> T operator()(T a, T b) const { return a + b; } };
struct Prod { template <typename T> T operator()(T a, T b) const { return a * b; } };
struct FMax { template <typename T> T operator()(T a, T b) const { return fmaximum(a, b); } };
struct FMin { template <typename T> T operator()(T a, T b) const { return fminimum(a, b); } };
struct IMax { template <typename T> T operator()(T a, T b) const { return a > b ? a : b; } };
struct IMin { template <typename T> T operator()(T a, T b) const { return a < b ? a : b; } };
// The device preamble's reductions, over graphc_host's shuffle.
template <typename T, typename F> T warp_reduce(T v, F f) {
  for (int offset = 16; offset > 0; offset >>= 1) v = f(v, graphc_host::shuffleXor(v, offset));
  return v;
}
template <typename T, typename F> T block_reduce(T v, F f, double* scratch) {
  T* partial = reinterpret_cast<T*>(scratch);
  v = warp_reduce(v, f);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = partial[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) r = f(r, partial[w]);
  return r;
}
inline void mma_bf16(float* d, const unsigned* a, const unsigned* b) { graphc_host::mma<true>(d, a, b); }
inline void mma_f16(float* d, const unsigned* a, const unsigned* b) { graphc_host::mma<false>(d, a, b); }
}  // namespace gc
)HOST";

/// A launch wrapper per `extern "C" __global__` function of `source`:
/// `graphc_launch_<name>(void** args, unsigned threads)` runs it as one
/// block of `threads` with *args[i] as parameter i.
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
    out += "extern \"C\" void graphc_launch_" + name +
           "(void** a, unsigned threads) {\n  graphc_host::run(threads, [a] { " + name + "(";
    for (size_t i = 0; i < types.size(); ++i)
      out += (i ? ", " : "") + std::string("*(") + types[i] + "*)a[" + std::to_string(i) + "]";
    out += "); });\n}\n";
  }
  return out;
}

}  // namespace graphc::testing
