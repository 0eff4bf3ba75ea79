// GEMM with a fused epilogue on the CPU backend: OpenBLAS computes the
// output in row tiles and the kernel's epilogue (bias, activation,
// residual: the rest of a matmul_epilogue kernel) runs on each tile right
// after, while it is still in the core's cache, so no extra pass over the
// output is made. Tiles (row tiles, split into column blocks when there are
// fewer rows tiles than threads) are spread over the thread pool, OpenBLAS
// running single-threaded inside each.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "ir/DType.h"
#include "runtime/cpu/ThreadPool.h"

namespace graphc::runtime::cpu {

/// C[b] = A[b] · B[b] (B transposed for linear), row-major, for every batch
/// index b; the batch dims' broadcasting is in the offsets.
struct GemmProblem {
  ir::DType dtype = ir::DType::F32;  // F32 (sgemm) or F64 (dgemm)
  const void* a = nullptr;
  const void* b = nullptr;
  int64_t m = 0, n = 0, k = 0;
  bool transposeB = false;                  // B is [n, k]
  std::vector<int64_t> aOffsets, bOffsets;  // per batch index, in elements
};

/// Runs on outer points [begin, end) of the flattened output (tile rows ×
/// n), with `acc` the tile's GEMM result.
using TileEpilogue = std::function<void(int64_t begin, int64_t end, const void* acc)>;

/// Rows per tile: the tile (rows × n accumulators) is 2 MiB, at most 512
/// rows and at least 16: big enough that OpenBLAS's packing of B, redone
/// per call, stays amortised, small enough that each thread's tile is still
/// in cache (L2, or the shared L3) when the epilogue reads it. Measured on
/// P2 (graphc-cpu-bench BM_P2_*, 2 cores, medians of 5; the machine is
/// noisy): 512 KiB tiles 1.18× the bare sgemm, 1 MiB 1.08–1.14×, 2 MiB
/// 1.06–1.11×.
int64_t gemmTileRows(const GemmProblem& p);

/// Computes every tile and calls `epilogue` on it. `scratch` holds one tile
/// buffer per pool thread (resized here when too small, so a captured plan
/// keeps its buffers from call to call).
void gemmWithEpilogue(const GemmProblem& p, const TileEpilogue& epilogue, std::vector<std::vector<std::byte>>& scratch,
                      ThreadPool& pool);

}  // namespace graphc::runtime::cpu
