// Error checking for the CUDA libraries' status codes (internal to
// codegen/cuda): a failed call becomes an ir::Error naming the call.
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "ir/Diagnostics.h"

namespace graphc::codegen::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw ir::Error(fmt::format("cuda: {}: {}", what, cudaGetErrorString(status)));
}

}  // namespace graphc::codegen::cuda
