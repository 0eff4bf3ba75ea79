#include "codegen/cuda/CudaEigh.h"

#include <algorithm>

#include <climits>

namespace graphc::codegen::cuda {

const char* methodName(EighPlan::Method m) {
  switch (m) {
    case EighPlan::Method::XsyevBatched: return "cusolverDnXsyevBatched";
    case EighPlan::Method::SyevjBatched: return "cusolverDn{S,D}syevjBatched";
    case EighPlan::Method::XsyevdLoop: return "cusolverDnXsyevd";
  }
  return "?";
}

EighPlan planEigh(int64_t n, int64_t batch, int cusolverVersion) {
  EighPlan p;
  if (batch <= 0 || n <= 0) return p;
  int64_t perCall = 1;
  if (cusolverVersion >= kXsyevBatchedMinVersion) {
    p.method = EighPlan::Method::XsyevBatched;
    perCall = std::max<int64_t>(1, INT32_MAX / (n * n));
  } else if (n <= kSyevjBatchedMaxN) {
    p.method = EighPlan::Method::SyevjBatched;
    perCall = std::max<int64_t>(1, INT32_MAX / (n * n));  // its int lda·n·batch indexing
  } else {
    p.method = EighPlan::Method::XsyevdLoop;
  }
  for (int64_t first = 0; first < batch; first += perCall)
    p.calls.emplace_back(first, std::min(perCall, batch - first));
  return p;
}

}  // namespace graphc::codegen::cuda
