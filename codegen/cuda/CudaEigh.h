// eigh on the GPU through cuSOLVER, as PyTorch 2.12 dispatches it:
//
//   cuSOLVER ≥ 11.7.1   cusolverDnXsyevBatched, the batch cut into chunks
//                       whose n·n·count stays under INT32_MAX (the batched
//                       API's element-count limit)
//   older, n ≤ 32       cusolverDn{S,D}syevjBatched (Jacobi; its size limit)
//   older, n > 32       cusolverDnXsyevd, one call per matrix
//
// The input is row-major and symmetric, so cuSOLVER (column-major) sees the
// same matrix with the triangles swapped: uplo L is passed as UPPER. The
// eigenvectors come back column-major and are transposed in place by a
// generated kernel. Every matrix's info is read back (in a plain run after
// the stream's sync; under capture by a copy inside the graph) and a
// failure names its batch index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/DType.h"

namespace graphc::codegen::cuda {

struct EighPlan {
  enum class Method { XsyevBatched, SyevjBatched, XsyevdLoop };
  Method method = Method::XsyevBatched;
  /// [first, first + count) of the batch per library call.
  std::vector<std::pair<int64_t, int64_t>> calls;
};

const char* methodName(EighPlan::Method m);

inline constexpr int64_t kSyevjBatchedMaxN = 32;
inline constexpr int kXsyevBatchedMinVersion = 11701;

/// The method and calls for `batch` matrices of n×n with cuSOLVER version
/// `cusolverVersion` (CUSOLVER_VERSION's spelling). Pure: unit-tested.
EighPlan planEigh(int64_t n, int64_t batch, int cusolverVersion);

}  // namespace graphc::codegen::cuda
