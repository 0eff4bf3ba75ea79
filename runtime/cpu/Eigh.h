// eigh on the CPU backend (torch.linalg.eigh semantics: eigenvalues in
// ascending order, eigenvectors as columns, one triangle read): for small
// matrices a batched cyclic-Jacobi solver that works on kJacobiLanes
// matrices at once, one SIMD lane per matrix; above kJacobiMaxN, LAPACK's
// ssyevd/dsyevd, in parallel over the batch. Jacobi's per-matrix cost is
// O(n³ · sweeps) with no call overhead, LAPACK's carries a fixed cost per
// call that dominates below the crossover (measured by tools/bench).
#pragma once

#include "runtime/Tensor.h"
#include "runtime/cpu/ThreadPool.h"

namespace graphc::runtime::cpu {

/// Largest n solved by the batched Jacobi kernel. Measured on 2000 f32
/// matrices (graphc-cpu-bench BM_EighJacobi vs BM_EighLapack, 2 cores):
/// Jacobi is 1.9× faster at n = 24 and 8% slower at n = 32.
inline constexpr int64_t kJacobiMaxN = 24;

/// values: [..., n], vectors: [..., n, n], both preallocated with a's dtype
/// (f32 or f64). `uplo` 'L' or 'U'. Throws ir::Error naming the batch index
/// of a matrix that did not converge (Jacobi) or that LAPACK rejected.
void eigh(const Tensor& a, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool);

/// The two solvers, for tests and benchmarks (eigh picks one by n).
void eighJacobi(const Tensor& a, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool);
void eighLapack(const Tensor& a, char uplo, Tensor& values, Tensor& vectors, ThreadPool& pool);

}  // namespace graphc::runtime::cpu
