#include "runtime/cpu/Eigh.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include <cblas.h>
#include <fmt/format.h>
#include <lapacke.h>

#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime::cpu {

namespace {

constexpr int kMaxSweeps = 50;

/// Lanes per group: one 512-bit vector of matrices' elements.
template <typename T>
constexpr int kLanes = 64 / sizeof(T);

/// Cyclic Jacobi on W matrices at once (Golub & Van Loan, Algorithm 8.5.2):
/// a[(i*n + j)*W + l] is element (i, j) of matrix l, v the same for the
/// eigenvectors. Each rotation zeroes a[p][q] of every lane; a lane whose
/// off-diagonal norm is below eps·‖A‖_F has converged. Returns the lanes'
/// convergence as a bit mask. The lane loops are what the compiler widens.
template <typename T, int W>
[[gnu::always_inline]] inline uint32_t jacobiGroup(T* a, T* v, int n) {
  const T eps = std::numeric_limits<T>::epsilon();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < W; ++l) v[(i * n + j) * W + l] = i == j ? T(1) : T(0);
  T norm2[W] = {}, off2[W];
  for (int i = 0; i < n * n; ++i)
    for (int l = 0; l < W; ++l) norm2[l] += a[i * W + l] * a[i * W + l];
  uint32_t converged = 0;
  for (int sweep = 0; sweep <= kMaxSweeps; ++sweep) {
    for (int l = 0; l < W; ++l) off2[l] = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j)
          for (int l = 0; l < W; ++l) off2[l] += a[(i * n + j) * W + l] * a[(i * n + j) * W + l];
    converged = 0;
    for (int l = 0; l < W; ++l)
      if (off2[l] <= eps * eps * norm2[l]) converged |= 1u << l;
    if (converged == (W == 32 ? ~0u : (1u << W) - 1) || sweep == kMaxSweeps) break;
    for (int p = 0; p < n - 1; ++p)
      for (int q = p + 1; q < n; ++q) {
        T c[W], s[W];
        for (int l = 0; l < W; ++l) {
          const T apq = a[(p * n + q) * W + l], app = a[(p * n + p) * W + l], aqq = a[(q * n + q) * W + l];
          const bool zero = apq == T(0);
          const T tau = (aqq - app) / (T(2) * (zero ? T(1) : apq));
          const T t = (tau >= T(0) ? T(1) : T(-1)) / (std::fabs(tau) + std::sqrt(T(1) + tau * tau));
          const T cc = T(1) / std::sqrt(T(1) + t * t);
          c[l] = zero ? T(1) : cc;
          s[l] = zero ? T(0) : t * cc;
        }
        // x, y ← c·x − s·y, s·x + c·y for lane l: one plane rotation.
        auto rotate = [&](T& x, T& y, int l) {
          const T x0 = x, y0 = y;
          x = c[l] * x0 - s[l] * y0;
          y = s[l] * x0 + c[l] * y0;
        };
        for (int k = 0; k < n; ++k)  // columns p and q: A·J
          for (int l = 0; l < W; ++l) rotate(a[(k * n + p) * W + l], a[(k * n + q) * W + l], l);
        for (int k = 0; k < n; ++k)  // rows p and q: Jᵀ·(A·J)
          for (int l = 0; l < W; ++l) rotate(a[(p * n + k) * W + l], a[(q * n + k) * W + l], l);
        for (int l = 0; l < W; ++l) a[(p * n + q) * W + l] = a[(q * n + p) * W + l] = T(0);
        for (int k = 0; k < n; ++k)  // V·J
          for (int l = 0; l < W; ++l) rotate(v[(k * n + p) * W + l], v[(k * n + q) * W + l], l);
      }
  }
  return converged;
}

// One clone per ISA level: the lane loops become AVX-512, AVX2 or SSE code,
// picked at load time for the host.
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
uint32_t jacobiGroupF32(float* a, float* v, int n) {
  return jacobiGroup<float, kLanes<float>>(a, v, n);
}
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
uint32_t jacobiGroupF64(double* a, double* v, int n) {
  return jacobiGroup<double, kLanes<double>>(a, v, n);
}

uint32_t jacobiGroupOf(float* a, float* v, int n) { return jacobiGroupF32(a, v, n); }
uint32_t jacobiGroupOf(double* a, double* v, int n) { return jacobiGroupF64(a, v, n); }

/// Element (i, j) of the symmetric matrix whose `uplo` triangle is stored.
template <typename T>
T symmetricAt(const T* m, int64_t n, int64_t i, int64_t j, char uplo) {
  const bool lower = uplo == 'L';
  return (lower ? i >= j : i <= j) ? m[i * n + j] : m[j * n + i];
}

template <typename T>
void jacobiBatch(const Tensor& input, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool) {
  constexpr int W = kLanes<T>;
  const int64_t n = input.shape().back();
  const int64_t batch = n == 0 ? 0 : input.numel() / (n * n);
  const int64_t groups = (batch + W - 1) / W;
  const T* in = input.as<T>();
  T* w = values.as<T>();
  T* vec = vectors.as<T>();
  pool.parallelFor(groups, 1, [&](int64_t begin, int64_t end, int) {
    std::vector<T> a(static_cast<size_t>(n * n * W)), v(a.size());
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = g * W, lanes = std::min<int64_t>(W, batch - first);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t l = 0; l < W; ++l)  // unused lanes hold the identity
            a[static_cast<size_t>((i * n + j) * W + l)] =
                l < lanes ? symmetricAt(in + (first + l) * n * n, n, i, j, uplo) : T(i == j);
      const uint32_t converged = jacobiGroupOf(a.data(), v.data(), static_cast<int>(n));
      for (int64_t l = 0; l < lanes; ++l) {
        if (!(converged & (1u << l)))
          throw ir::Error(
              fmt::format("eigh: the Jacobi solver did not converge for matrix {} of the batch "
                          "(after {} sweeps)",
                          first + l, kMaxSweeps));
        auto diag = [&](int64_t i) { return a[static_cast<size_t>((i * n + i) * W + l)]; };
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return diag(x) < diag(y); });
        T* outVec = vec + (first + l) * n * n;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t src = order[static_cast<size_t>(j)];
          w[(first + l) * n + j] = diag(src);
          for (int64_t i = 0; i < n; ++i) outVec[i * n + j] = v[static_cast<size_t>((i * n + src) * W + l)];
        }
      }
    }
  });
}

lapack_int syevdWork(float* a, lapack_int n, float* w, float* work, lapack_int lwork, lapack_int* iwork,
                     lapack_int liwork, char uplo) {
  return LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', uplo, n, a, n, w, work, lwork, iwork, liwork);
}
lapack_int syevdWork(double* a, lapack_int n, double* w, double* work, lapack_int lwork, lapack_int* iwork,
                     lapack_int liwork, char uplo) {
  return LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', uplo, n, a, n, w, work, lwork, iwork, liwork);
}

template <typename T>
void lapackBatch(const Tensor& input, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool) {
  const int64_t n = input.shape().back();
  const int64_t batch = n == 0 ? 0 : input.numel() / (n * n);
  const auto ln = static_cast<lapack_int>(n);
  // A row-major matrix read column-major is its transpose: the same
  // symmetric matrix with the other triangle named. So LAPACK works in place
  // in the output, with no row-major conversion; only the eigenvectors (its
  // columns) are transposed back to torch's layout.
  const char colMajorUplo = uplo == 'L' ? 'U' : 'L';
  // Matrices spread over the pool, OpenBLAS single-threaded inside each
  // (its own threads on top would oversubscribe the cores); one matrix gets
  // OpenBLAS's threads.
  openblas_set_num_threads(batch > 1 ? 1 : pool.size());
  pool.parallelFor(batch, 1, [&](int64_t begin, int64_t end, int) {
    T workSize = 0;
    lapack_int iworkSize = 0;
    if (syevdWork(nullptr, ln, nullptr, &workSize, -1, &iworkSize, -1, colMajorUplo) != 0)
      throw ir::Error("eigh: LAPACK syevd workspace query failed");
    std::vector<T> work(static_cast<size_t>(workSize));
    std::vector<lapack_int> iwork(static_cast<size_t>(iworkSize));
    for (int64_t b = begin; b < end; ++b) {
      T* m = vectors.as<T>() + b * n * n;
      std::copy_n(input.as<T>() + b * n * n, n * n, m);
      const lapack_int info =
          syevdWork(m, ln, values.as<T>() + b * n, work.data(), static_cast<lapack_int>(work.size()), iwork.data(),
                    static_cast<lapack_int>(iwork.size()), colMajorUplo);
      if (info != 0)
        throw ir::Error(fmt::format("eigh: LAPACK syevd failed for matrix {} of the batch (info = {})", b, info));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j) std::swap(m[i * n + j], m[j * n + i]);
    }
  });
}

}  // namespace

void eighJacobi(const Tensor& a, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool) {
  if (a.dtype() == ir::DType::F32)
    jacobiBatch<float>(a, uplo, values, vectors, pool);
  else
    jacobiBatch<double>(a, uplo, values, vectors, pool);
}

void eighLapack(const Tensor& a, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool) {
  if (a.dtype() == ir::DType::F32)
    lapackBatch<float>(a, uplo, values, vectors, pool);
  else
    lapackBatch<double>(a, uplo, values, vectors, pool);
}

void eigh(const Tensor& a, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool) {
  if (std::optional<int64_t> bad = reference::firstNonFiniteMatrix(a, uplo)) throw reference::nonFiniteEighInput(*bad);
  if (a.shape().back() <= kJacobiMaxN)
    eighJacobi(a, uplo, values, vectors, pool);
  else
    eighLapack(a, uplo, values, vectors, pool);
}

}  // namespace graphc::runtime::cpu
