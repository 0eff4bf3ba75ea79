#include "runtime/CpuGemm.h"

#include <algorithm>

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
  const int64_t tilesPerBatch = (p.m + rows - 1) / rows;
  const int64_t tiles = batch * tilesPerBatch;
  if (tiles == 0 || p.n == 0) return;
  const size_t element = static_cast<size_t>(ir::dtypeSize(p.dtype));
  const size_t tileBytes = static_cast<size_t>(std::min(rows, p.m) * p.n) * element;
  if (scratch.size() < static_cast<size_t>(pool.size())) scratch.resize(static_cast<size_t>(pool.size()));
  // Tiles spread over the pool: each thread's BLAS call runs on its own
  // core. A single tile instead gets OpenBLAS's own threads.
  openblas_set_num_threads(tiles >= pool.size() ? 1 : pool.size());
  const auto lda = static_cast<blasint>(std::max<int64_t>(p.k, 1));
  const auto ldb = static_cast<blasint>(std::max<int64_t>(p.transposeB ? p.k : p.n, 1));
  const auto ldc = static_cast<blasint>(p.n);
  const CBLAS_TRANSPOSE tb = p.transposeB ? CblasTrans : CblasNoTrans;
  pool.parallelFor(tiles, 1, [&](int64_t begin, int64_t end, int chunk) {
    std::vector<std::byte>& tile = scratch[static_cast<size_t>(chunk)];
    if (tile.size() < tileBytes) tile.resize(tileBytes);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / tilesPerBatch, row0 = (t % tilesPerBatch) * rows;
      const int64_t count = std::min(rows, p.m - row0);
      const auto m = static_cast<blasint>(count), n = static_cast<blasint>(p.n), k = static_cast<blasint>(p.k);
      const size_t aAt = static_cast<size_t>(p.aOffsets[b] + row0 * p.k), bAt = static_cast<size_t>(p.bOffsets[b]);
      if (p.dtype == ir::DType::F64) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0, static_cast<const double*>(p.a) + aAt, lda,
                    static_cast<const double*>(p.b) + bAt, ldb, 0.0, reinterpret_cast<double*>(tile.data()), ldc);
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0f, static_cast<const float*>(p.a) + aAt, lda,
                    static_cast<const float*>(p.b) + bAt, ldb, 0.0f, reinterpret_cast<float*>(tile.data()), ldc);
      }
      const int64_t first = (b * p.m + row0) * p.n;
      epilogue(first, first + count * p.n, tile.data());
    }
  });
}

}  // namespace graphc::runtime::cpu
