#include "runtime/cpu/Gemm.h"

#include <algorithm>
#include <cmath>

#include <cblas.h>

namespace graphc::runtime::cpu {

int64_t gemmTileRows(const GemmProblem& p) {
  constexpr int64_t kTileBytes = 2 * 1024 * 1024;
  const int64_t rowBytes = std::max<int64_t>(p.n, 1) * ir::dtypeSize(p.dtype);
  return std::clamp<int64_t>(kTileBytes / rowBytes, 16, 512);
}

void gemmWithEpilogue(const GemmProblem& p, const TileEpilogue& epilogue, std::vector<std::vector<std::byte>>& scratch,
                      ThreadPool& pool) {
  const int64_t batch = static_cast<int64_t>(p.aOffsets.size());
  const int64_t rows = gemmTileRows(p);
  const int64_t rowTilesPerBatch = (p.m + rows - 1) / rows;
  const int64_t rowTiles = batch * rowTilesPerBatch;
  if (rowTiles == 0 || p.n == 0) return;
  // Tasks of at least ~1 MFLOP: a smaller GEMM (an attention head's
  // [8, 8] x [8, 8]) costs less than waking a thread, so it stays on one.
  constexpr double kMinTaskFlops = 1 << 20;
  const double totalFlops = 2.0 * static_cast<double>(batch) * static_cast<double>(p.m) * static_cast<double>(p.n) *
                            static_cast<double>(std::max<int64_t>(p.k, 1));
  // Fewer row tiles than threads (a short or single-row GEMM) with work
  // for more than one: split the columns too, in blocks of at least 64.
  int64_t colBlocks = 1;
  if (rowTiles < pool.size() && totalFlops >= 2 * kMinTaskFlops)
    colBlocks = std::clamp<int64_t>((pool.size() + rowTiles - 1) / rowTiles, 1, (p.n + 63) / 64);
  const int64_t blockCols = (p.n + colBlocks - 1) / colBlocks;
  const size_t element = static_cast<size_t>(ir::dtypeSize(p.dtype));
  const size_t tileBytes = static_cast<size_t>(std::min(rows, p.m) * blockCols) * element;
  if (scratch.size() < static_cast<size_t>(pool.size())) scratch.resize(static_cast<size_t>(pool.size()));
  // All parallelism is the pool's: OpenBLAS runs single-threaded in each
  // task (its own threads would oversubscribe the cores, and they spin for
  // a while after each call, slowing the kernels that follow).
  openblas_set_num_threads(1);
  const auto lda = static_cast<blasint>(std::max<int64_t>(p.k, 1));
  const auto ldb = static_cast<blasint>(std::max<int64_t>(p.transposeB ? p.k : p.n, 1));
  const CBLAS_TRANSPOSE tb = p.transposeB ? CblasTrans : CblasNoTrans;
  const double tileFlops = 2.0 * static_cast<double>(std::min(rows, p.m)) * static_cast<double>(blockCols) *
                           static_cast<double>(std::max<int64_t>(p.k, 1));
  const auto grain = static_cast<int64_t>(std::max(1.0, std::ceil(kMinTaskFlops / tileFlops)));
  pool.parallelFor(rowTiles * colBlocks, grain, [&](int64_t begin, int64_t end, int chunk) {
    std::vector<std::byte>& tile = scratch[static_cast<size_t>(chunk)];
    if (tile.size() < tileBytes) tile.resize(tileBytes);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t rowTile = t / colBlocks, col0 = (t % colBlocks) * blockCols;
      const int64_t b = rowTile / rowTilesPerBatch, row0 = (rowTile % rowTilesPerBatch) * rows;
      const int64_t count = std::min(rows, p.m - row0), cols = std::min(blockCols, p.n - col0);
      if (cols <= 0) continue;
      const auto m = static_cast<blasint>(count), n = static_cast<blasint>(cols), k = static_cast<blasint>(p.k);
      const size_t aAt = static_cast<size_t>(p.aOffsets[b] + row0 * p.k);
      const size_t bAt = static_cast<size_t>(p.bOffsets[b] + (p.transposeB ? col0 * p.k : col0));
      if (p.dtype == ir::DType::F64) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0, static_cast<const double*>(p.a) + aAt, lda,
                    static_cast<const double*>(p.b) + bAt, ldb, 0.0, reinterpret_cast<double*>(tile.data()), n);
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0f, static_cast<const float*>(p.a) + aAt, lda,
                    static_cast<const float*>(p.b) + bAt, ldb, 0.0f, reinterpret_cast<float*>(tile.data()), n);
      }
      const int64_t first = (b * p.m + row0) * p.n + col0;
      if (cols == p.n) {
        epilogue(first, first + count * p.n, tile.data());
      } else {  // a column block: the epilogue runs per row, each row's part contiguous in the tile
        for (int64_t r = 0; r < count; ++r)
          epilogue(first + r * p.n, first + r * p.n + cols, tile.data() + static_cast<size_t>(r * cols) * element);
      }
    }
  });
}

}  // namespace graphc::runtime::cpu
