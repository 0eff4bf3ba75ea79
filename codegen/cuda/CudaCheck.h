// Error checking for the CUDA libraries' status codes (internal to
// codegen/cuda): a failed call becomes an ir::Error naming the call.
#pragma once

#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include "ir/Diagnostics.h"

namespace graphc::codegen::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw ir::Error(fmt::format("cuda: {}: {}", what, cudaGetErrorString(status)));
}

inline void checkSolver(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw ir::Error(fmt::format("cusolver: {}: status {}", what, static_cast<int>(s)));
}

}  // namespace graphc::codegen::cuda
