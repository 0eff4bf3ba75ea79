#include "runtime/cpu/Gemm.h"

#include <algorithm>
#include <cmath>

#include <cblas.h>

#include "runtime/cpu/gemm/MicroKernel.h"

namespace graphc::runtime::cpu {

namespace {

using gemm::MatrixView;
using gemm::MicroKernel;

// Tasks of at least ~1 MFLOP: a smaller GEMM (an attention head's [8, 8] x
// [8, 8]) costs less than handing work to another thread.
constexpr double kMinTaskFlops = 1 << 20;

template <typename T>
T* floats(std::vector<std::byte>& buffer, size_t count) {
  if (buffer.size() < count * sizeof(T)) buffer.resize(count * sizeof(T));
  return reinterpret_cast<T*>(buffer.data());
}

/// How the output is cut into tiles: row blocks of `rows` (a multiple of
/// the kernel's mr), column blocks of `cols` (a multiple of nr, or all n).
struct Tiling {
  int64_t rows = 0, rowBlocks = 0, cols = 0, colBlocks = 0, batch = 0;
  int64_t tasks() const { return batch * rowBlocks * colBlocks; }
};

/// `mr`, `nr`: the panel widths of C's rows and columns.
Tiling tile(const GemmProblem& p, int mr, int nr, int threads) {
  Tiling t;
  t.batch = static_cast<int64_t>(p.aOffsets.size());
  const int64_t k = std::max<int64_t>(p.k, 1);
  // A row block's packed A (rows × k) within ~192 KiB of the core's L2 and
  // its output tile within 1 MiB, so that both are still there for the
  // next column panel and for the epilogue.
  int64_t rows = std::min<int64_t>(49152 / k, 262144 / std::max<int64_t>(p.n, 1));
  rows = std::clamp<int64_t>(rows / mr * mr, mr, 512);
  t.rows = std::min(rows, (p.m + mr - 1) / mr * mr);
  t.rowBlocks = (p.m + t.rows - 1) / t.rows;
  t.cols = p.n;
  t.colBlocks = 1;
  // Fewer tiles than threads with work for more than one: split the columns.
  const double flops =
      2.0 * static_cast<double>(t.batch) * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(k);
  if (t.batch * t.rowBlocks < threads && flops >= 2 * kMinTaskFlops) {
    const int64_t want =
        std::min<int64_t>((threads + t.batch * t.rowBlocks - 1) / (t.batch * t.rowBlocks), (p.n + nr - 1) / nr);
    t.cols = ((p.n + want - 1) / want + nr - 1) / nr * nr;
    t.colBlocks = (p.n + t.cols - 1) / t.cols;
  }
  return t;
}

/// Calls the epilogue on a finished tile: rows × cols at (row0, col0) of
/// batch index b, `acc` row-major with `cols` per row.
template <typename T>
void finishTile(const GemmProblem& p, const TileEpilogue& epilogue, int64_t b, int64_t row0, int64_t rows, int64_t col0,
                int64_t cols, const T* acc) {
  const int64_t first = (b * p.m + row0) * p.n + col0;
  if (cols == p.n) {
    epilogue(first, first + rows * p.n, acc);
    return;
  }
  for (int64_t r = 0; r < rows; ++r)  // a column block: each row's part is contiguous
    epilogue(first + r * p.n, first + r * p.n + cols, acc + r * cols);
}

MatrixView viewA(const GemmProblem& p, int64_t b) {
  return {static_cast<const float*>(p.a) + p.aOffsets[static_cast<size_t>(b)], p.k, 1};
}

MatrixView viewB(const GemmProblem& p, int64_t b) {
  const float* at = static_cast<const float*>(p.b) + p.bOffsets[static_cast<size_t>(b)];
  return p.transposeB ? MatrixView{at, 1, p.k} : MatrixView{at, p.n, 1};
}

/// Columns [col0, col0 + cols) of batch index b's B into panels; a
/// convolution's images are read from `padded` when they needed a border.
void packBColumns(const GemmProblem& p, const std::vector<float>& padded, int64_t b, int64_t col0, int64_t cols, int nr,
                  float* out) {
  if (!p.conv) {
    gemm::packB(viewB(p, b), col0, cols, p.k, nr, out);
    return;
  }
  const float* image = padded.empty() ? static_cast<const float*>(p.b) + p.bOffsets[static_cast<size_t>(b)]
                                      : padded.data() + b * p.conv->paddedFloats();
  gemm::packConvB(image, *p.conv, col0, cols, nr, out);
}

/// A convolution's images with their zero borders, once per call, so that
/// packing reads without bounds checks.
void padImages(const GemmProblem& p, int64_t images, GemmScratch& scratch, ThreadPool& pool) {
  if (!p.conv || !p.conv->needsPadding()) {
    scratch.paddedImages.clear();
    return;
  }
  const int64_t floats = p.conv->paddedFloats();
  scratch.paddedImages.resize(static_cast<size_t>(images * floats));
  pool.parallelFor(images, std::max<int64_t>(1, 65536 / std::max<int64_t>(floats, 1)),
                   [&](int64_t begin, int64_t end, int) {
                     for (int64_t b = begin; b < end; ++b)
                       gemm::padImage(static_cast<const float*>(p.b) + p.bOffsets[static_cast<size_t>(b)], *p.conv,
                                      scratch.paddedImages.data() + b * floats);
                   });
}

void packedGemm(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const MicroKernel& kernel = gemm::hostMicroKernel();
  // The panel widths of C's rows (A's panels) and columns (B's): the
  // kernel's mr and nr, or swapped for transposed tiles.
  const bool transposed = p.transposedTiles;
  const int mr = transposed ? kernel.nr : kernel.mr, nr = transposed ? kernel.mr : kernel.nr;
  const Tiling t = tile(p, mr, nr, pool.size());
  const int64_t k = p.k;
  padImages(p, t.batch, scratch, pool);
  // B shared by several row blocks is packed once, before the tiles.
  const bool packBFirst = !p.packedB && t.rowBlocks > 1;
  const int64_t bFloats = gemm::packedFloats(p.n, k, nr);
  if (packBFirst) {
    scratch.packedB.resize(static_cast<size_t>(t.batch * bFloats));
    const int64_t panels = (p.n + nr - 1) / nr;
    const double panelFlops = 2.0 * static_cast<double>(nr) * static_cast<double>(std::max<int64_t>(k, 1));
    pool.parallelFor(t.batch * panels, std::max<int64_t>(1, static_cast<int64_t>(kMinTaskFlops / panelFlops)),
                     [&](int64_t begin, int64_t end, int) {
                       for (int64_t i = begin; i < end; ++i) {
                         const int64_t b = i / panels, col0 = i % panels * nr;
                         packBColumns(p, scratch.paddedImages, b, col0, std::min<int64_t>(nr, p.n - col0), nr,
                                      scratch.packedB.data() + b * bFloats + col0 * k);
                       }
                     });
  }
  if (scratch.tiles.size() < static_cast<size_t>(pool.size())) scratch.tiles.resize(static_cast<size_t>(pool.size()));
  const double tileFlops =
      2.0 * static_cast<double>(t.rows) * static_cast<double>(t.cols) * static_cast<double>(std::max<int64_t>(k, 1));
  const auto grain = static_cast<int64_t>(std::max(1.0, std::ceil(kMinTaskFlops / tileFlops)));
  const int64_t aTileFloats = p.packedA ? 0 : gemm::packedFloats(t.rows, k, mr);
  const int64_t bTileFloats = p.packedB || packBFirst ? 0 : gemm::packedFloats(t.cols, k, nr);
  const int64_t outFloats = t.rows * t.cols * (transposed ? 2 : 1);  // a transposed tile, then the tile
  pool.parallelFor(t.tasks(), grain, [&](int64_t begin, int64_t end, int chunk) {
    float* buffer = floats<float>(scratch.tiles[static_cast<size_t>(chunk)],
                                  static_cast<size_t>(outFloats + aTileFloats + bTileFloats));
    float* out = buffer;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t colBlock = task % t.colBlocks, rowBlock = task / t.colBlocks % t.rowBlocks;
      const int64_t b = task / t.colBlocks / t.rowBlocks;
      const int64_t row0 = rowBlock * t.rows, rows = std::min(t.rows, p.m - row0);
      const int64_t col0 = colBlock * t.cols, cols = std::min(t.cols, p.n - col0);
      const float* aPanels;
      if (p.packedA) {
        aPanels = p.packedA->matrix(p.aOffsets[static_cast<size_t>(b)]) + row0 * k;
      } else {
        gemm::packA(viewA(p, b), row0, rows, k, mr, buffer + outFloats);
        aPanels = buffer + outFloats;
      }
      const float* bPanels;
      if (p.packedB) {
        bPanels = p.packedB->matrix(p.bOffsets[static_cast<size_t>(b)]) + col0 * k;
      } else if (packBFirst) {
        bPanels = scratch.packedB.data() + b * bFloats + col0 * k;
      } else {
        packBColumns(p, scratch.paddedImages, b, col0, cols, nr, buffer + outFloats + aTileFloats);
        bPanels = buffer + outFloats + aTileFloats;
      }
      if (!transposed) {
        // Column panel by column panel: one B panel (k × nr) stays in L1/L2
        // while every row group of the block passes over it.
        for (int64_t j = 0; j < cols; j += nr)
          for (int64_t i = 0; i < rows; i += mr)
            kernel.run(k, aPanels + i * k, bPanels + j * k, out + i * cols + j, cols,
                       static_cast<int>(std::min<int64_t>(mr, rows - i)),
                       static_cast<int>(std::min<int64_t>(nr, cols - j)));
        finishTile(p, epilogue, b, row0, rows, col0, cols, out);
        continue;
      }
      // Cᵀ (cols × rows): B's panels are the kernel's row panels, A's its
      // column panels; then back to rows × cols for the epilogue.
      float* flipped = out + t.rows * t.cols;
      for (int64_t i = 0; i < rows; i += mr)
        for (int64_t j = 0; j < cols; j += nr)
          kernel.run(k, bPanels + j * k, aPanels + i * k, flipped + j * rows + i, rows,
                     static_cast<int>(std::min<int64_t>(nr, cols - j)),
                     static_cast<int>(std::min<int64_t>(mr, rows - i)));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = flipped[c * rows + r];
      finishTile(p, epilogue, b, row0, rows, col0, cols, out);
    }
  });
}

/// f64: OpenBLAS's dgemm per row tile (its packing redone per call).
void blasGemm(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const int64_t batch = static_cast<int64_t>(p.aOffsets.size());
  const int64_t rows = std::clamp<int64_t>(262144 / std::max<int64_t>(p.n, 1), 16, 512);
  const int64_t rowTilesPerBatch = (p.m + rows - 1) / rows;
  const double tileFlops = 2.0 * static_cast<double>(std::min(rows, p.m)) * static_cast<double>(p.n) *
                           static_cast<double>(std::max<int64_t>(p.k, 1));
  if (scratch.tiles.size() < static_cast<size_t>(pool.size())) scratch.tiles.resize(static_cast<size_t>(pool.size()));
  // All parallelism is the pool's: OpenBLAS runs single-threaded in each
  // task (its own threads would oversubscribe the cores).
  openblas_set_num_threads(1);
  const auto lda = static_cast<blasint>(std::max<int64_t>(p.k, 1));
  const auto ldb = static_cast<blasint>(std::max<int64_t>(p.transposeB ? p.k : p.n, 1));
  const CBLAS_TRANSPOSE tb = p.transposeB ? CblasTrans : CblasNoTrans;
  const auto grain = static_cast<int64_t>(std::max(1.0, std::ceil(kMinTaskFlops / tileFlops)));
  pool.parallelFor(batch * rowTilesPerBatch, grain, [&](int64_t begin, int64_t end, int chunk) {
    double* tile =
        floats<double>(scratch.tiles[static_cast<size_t>(chunk)], static_cast<size_t>(std::min(rows, p.m) * p.n));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / rowTilesPerBatch, row0 = (t % rowTilesPerBatch) * rows;
      const int64_t count = std::min(rows, p.m - row0);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, static_cast<blasint>(count), static_cast<blasint>(p.n),
                  static_cast<blasint>(p.k), 1.0,
                  static_cast<const double*>(p.a) + p.aOffsets[static_cast<size_t>(b)] + row0 * p.k, lda,
                  static_cast<const double*>(p.b) + p.bOffsets[static_cast<size_t>(b)], ldb, 0.0, tile,
                  static_cast<blasint>(std::max<int64_t>(p.n, 1)));
      finishTile(p, epilogue, b, row0, count, 0, p.n, tile);
    }
  });
}

}  // namespace

GemmScratch& GemmScratch::forThisThread() {
  thread_local GemmScratch scratch;
  return scratch;
}

bool convolutionTilesTransposed(int64_t channels, int64_t positions) {
  const MicroKernel& kernel = gemm::hostMicroKernel();
  auto padded = [](int64_t n, int64_t panel) { return (n + panel - 1) / panel * panel; };
  const int64_t straight = padded(channels, kernel.mr) * padded(positions, kernel.nr);
  const int64_t flipped = padded(positions, kernel.mr) * padded(channels, kernel.nr);
  return flipped * 4 < straight * 3;  // a quarter less work pays for the transpose
}

PackedWeights packWeightsA(const float* a, int64_t matrices, int64_t m, int64_t k, int panelRows) {
  const int mr = panelRows;
  PackedWeights w;
  w.sourceFloats = std::max<int64_t>(m * k, 1);
  w.packedFloats = gemm::packedFloats(m, k, mr);
  w.data.resize(static_cast<size_t>(matrices * w.packedFloats));
  for (int64_t i = 0; i < matrices; ++i)
    gemm::packA({a + i * m * k, k, 1}, 0, m, k, mr, w.data.data() + i * w.packedFloats);
  return w;
}

PackedWeights packWeightsB(const float* b, int64_t matrices, int64_t k, int64_t n, bool transposed) {
  const int nr = gemm::hostMicroKernel().nr;
  PackedWeights w;
  w.sourceFloats = std::max<int64_t>(k * n, 1);
  w.packedFloats = gemm::packedFloats(n, k, nr);
  w.data.resize(static_cast<size_t>(matrices * w.packedFloats));
  for (int64_t i = 0; i < matrices; ++i) {
    const float* at = b + i * k * n;
    gemm::packB(transposed ? MatrixView{at, 1, k} : MatrixView{at, n, 1}, 0, n, k, nr,
                w.data.data() + i * w.packedFloats);
  }
  return w;
}

void gemmWithEpilogue(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  if (p.aOffsets.empty() || p.m == 0 || p.n == 0) return;
  if (p.dtype == ir::DType::F64)
    blasGemm(p, epilogue, scratch, pool);
  else
    packedGemm(p, epilogue, scratch, pool);
}

}  // namespace graphc::runtime::cpu
