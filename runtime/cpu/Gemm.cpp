#include "runtime/cpu/Gemm.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <cblas.h>

#include "runtime/cpu/gemm/MicroKernel.h"

namespace graphc::runtime::cpu {

namespace {

using gemm::MatrixView;
using gemm::MicroKernel;

// Tasks of at least ~256 KFLOP (a few microseconds: a spinning worker takes
// one in well under one): a smaller GEMM (an attention head's [8, 8] x
// [8, 8]) costs less than handing work to another thread.
constexpr double kMinTaskFlops = 1 << 18;

/// The k block: a B panel's block (kc × nr floats: 32 KiB on AVX-512) fits
/// the core's L1 beside the A panels' blocks.
constexpr int64_t kKc = 256;

/// A task's output tile: at most 1 MiB of f32.
constexpr int64_t kTileFloats = 262144;

template <typename T>
T* floats(std::vector<std::byte>& buffer, size_t count) {
  if (buffer.size() < count * sizeof(T)) buffer.resize(count * sizeof(T));
  return reinterpret_cast<T*>(buffer.data());
}

/// One tile buffer per pool thread, made before the chunks run (they only
/// resize their own).
void prepareTiles(GemmScratch& scratch, const ThreadPool& pool) {
  if (scratch.tiles.size() < static_cast<size_t>(pool.size())) scratch.tiles.resize(static_cast<size_t>(pool.size()));
}

/// 2·rows·cols·k: a block's multiply-adds, k at least 1 (a k = 0 GEMM still
/// writes its zeros).
double flopsOf(int64_t rows, int64_t cols, int64_t k) {
  return 2.0 * static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(std::max<int64_t>(k, 1));
}

/// Tasks per chunk so that a chunk has at least kMinTaskFlops of work.
int64_t grainFor(double taskFlops) { return static_cast<int64_t>(std::max(1.0, std::ceil(kMinTaskFlops / taskFlops))); }

/// The block size (a multiple of `unit`, at most `block`) for `n` items
/// shared by `wanted` threads when the whole job (`flops`) is work for
/// more than one: at least `wanted` blocks, and while they are few (under
/// eight a thread) a multiple of `wanted` of them, of even size — the pool
/// hands each thread a contiguous run of tasks, so three blocks on two
/// threads run as two and one. `block` itself otherwise.
int64_t blockForThreads(int64_t n, int64_t block, int64_t unit, int64_t wanted, double flops) {
  if (flops < 2 * kMinTaskFlops || wanted <= 1 || n <= unit) return block;
  int64_t blocks = (n + block - 1) / block;
  if (blocks >= 8 * wanted) return block;
  blocks = (std::max(blocks, wanted) + wanted - 1) / wanted * wanted;
  return std::clamp<int64_t>(((n + blocks - 1) / blocks + unit - 1) / unit * unit, unit, std::max(block, unit));
}

/// to[c·rows + r] = from[r·cols + c]: a rows × cols block transposed.
void transposeInto(const float* from, int64_t rows, int64_t cols, float* to) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) to[c * rows + r] = from[r * cols + c];
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
  // A row block's packed A for one block of k (rows × kc) within ~192 KiB
  // of the core's L2, as many rows as that allows, since every row block
  // reads all of B again; its output tile within 1 MiB, so that it is
  // still there for the next block of k and for the epilogue. Where rows
  // that many over all of n would not fit the tile, the columns are cut
  // into blocks rather than the rows made fewer: a wide, deep B (the
  // weight gradient of a language model's head, [2048, 8192]) was
  // streamed from memory once per block of 30 rows.
  int64_t rows = std::clamp<int64_t>(49152 / std::min(k, kKc) / mr * mr, mr, 512);
  t.rows = std::min(rows, (p.m + mr - 1) / mr * mr);
  t.rowBlocks = (p.m + t.rows - 1) / t.rows;
  // Several row blocks of one matrix: evened out over the threads (m = 197
  // as blocks of 192 and 5 rows left one thread idle, m = 1024 as five of
  // 192 and one of 64 gave 576 rows to one thread and 448 to the other).
  // One block stays one: its columns are split below.
  if (t.batch == 1 && t.rowBlocks > 1) {
    t.rows = blockForThreads(p.m, t.rows, mr, threads, flopsOf(p.m, p.n, k));
    t.rowBlocks = (p.m + t.rows - 1) / t.rows;
  }
  t.cols = p.n;
  t.colBlocks = 1;
  if (t.rows * p.n > kTileFloats) {
    t.cols = std::max<int64_t>(nr, kTileFloats / t.rows / nr * nr);
    t.colBlocks = (p.n + t.cols - 1) / t.cols;
  }
  // Fewer tiles than threads with work for more than one: split the columns.
  if (t.tasks() < threads && flopsOf(t.batch * p.m, p.n, k) >= 2 * kMinTaskFlops) {
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

/// Columns [col0, col0 + cols) of batch index b's B into panels.
void packBColumns(const GemmProblem& p, int64_t b, int64_t col0, int64_t cols, int nr, float* out) {
  gemm::packB(viewB(p, b), col0, cols, p.k, nr, out);
}

/// Every batch index's whole B packed into `packed` (packedFloats(n, k, nr)
/// apart), before the tiles that share it; in parallel over the panels.
void packEveryB(const GemmProblem& p, int64_t batch, int nr, std::vector<float>& packed, ThreadPool& pool) {
  const int64_t bFloats = gemm::packedFloats(p.n, p.k, nr), panels = (p.n + nr - 1) / nr;
  packed.resize(static_cast<size_t>(batch * bFloats));
  pool.parallelFor(batch * panels, std::max<int64_t>(1, static_cast<int64_t>(kMinTaskFlops / flopsOf(1, nr, p.k))),
                   [&](int64_t begin, int64_t end, int) {
                     for (int64_t i = begin; i < end; ++i) {
                       const int64_t b = i / panels, col0 = i % panels * nr;
                       packBColumns(p, b, col0, std::min<int64_t>(nr, p.n - col0), nr,
                                    packed.data() + b * bFloats + col0 * p.k);
                     }
                   });
}

/// Whether C is better computed as Cᵀ = Bᵀ · Aᵀ: when n is too short to
/// fill the kernel's nr columns (an attention head's [64, 64] · [64, 8]
/// against 32 columns) and m is not, the transposed tiles waste less of
/// each register block. Only for operands packed per call.
bool transposeTiles(const GemmProblem& p, const MicroKernel& kernel) {
  if (p.packedA || p.packedB) return false;
  auto padded = [](int64_t n, int64_t panel) { return (n + panel - 1) / panel * panel; };
  const int64_t straight = padded(p.m, kernel.mr) * padded(p.n, kernel.nr);
  const int64_t flipped = padded(p.n, kernel.mr) * padded(p.m, kernel.nr);
  return flipped * 4 < straight * 3;  // a quarter less work pays for the transposes
}

/// C by transposed tiles: per batch index and block of C's rows, Cᵀ's
/// block (n × rows) from Bᵀ in mr-row panels and Aᵀ in nr-column panels,
/// transposed back for the epilogue.
void transposedTilesGemm(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const MicroKernel& kernel = gemm::hostMicroKernel();
  const int mr = kernel.mr, nr = kernel.nr;
  const int64_t batch = static_cast<int64_t>(p.aOffsets.size()), k = p.k;
  int64_t rows = std::clamp<int64_t>(262144 / std::max<int64_t>(p.n, 1) / nr * nr, nr, 512);
  rows = blockForThreads(p.m, rows, nr, (pool.size() + batch - 1) / batch, flopsOf(batch * p.m, p.n, k));
  rows = std::min(rows, (p.m + nr - 1) / nr * nr);
  const int64_t blocks = (p.m + rows - 1) / rows;
  const int64_t grain = grainFor(flopsOf(rows, p.n, k));
  const int64_t tileFloats = rows * p.n, bPack = gemm::packedFloats(p.n, k, mr),
                aPack = gemm::packedFloats(rows, k, nr);
  prepareTiles(scratch, pool);
  pool.parallelFor(batch * blocks, grain, [&](int64_t begin, int64_t end, int chunk) {
    float* flipped =
        floats<float>(scratch.tiles[static_cast<size_t>(chunk)], static_cast<size_t>(2 * tileFloats + bPack + aPack));
    float* out = flipped + tileFloats;
    float* bPanels = out + tileFloats;  // Bᵀ: C's columns as the kernel's rows
    float* aPanels = bPanels + bPack;   // Aᵀ: C's rows as the kernel's columns
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / blocks, row0 = task % blocks * rows, count = std::min(rows, p.m - row0);
      const MatrixView bv = viewB(p, b), av = viewA(p, b);
      gemm::packA({bv.data, bv.colStride, bv.rowStride}, 0, p.n, k, mr, bPanels);
      gemm::packB({av.data, av.colStride, av.rowStride}, row0, count, k, nr, aPanels);
      for (int64_t j = 0; j < count; j += nr)
        for (int64_t i = 0; i < p.n; i += mr)
          kernel.run(k, bPanels + i * k, aPanels + j * k, flipped + i * count + j, count,
                     static_cast<int>(std::min<int64_t>(mr, p.n - i)),
                     static_cast<int>(std::min<int64_t>(nr, count - j)), false);
      transposeInto(flipped, p.n, count, out);
      finishTile(p, epilogue, b, row0, count, 0, p.n, out);
    }
  });
}

void packedGemm(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const MicroKernel& kernel = gemm::hostMicroKernel();
  if (transposeTiles(p, kernel)) {
    transposedTilesGemm(p, epilogue, scratch, pool);
    return;
  }
  const int mr = kernel.mr, nr = kernel.nr;
  const Tiling t = tile(p, mr, nr, pool.size());
  const int64_t k = p.k;
  // B shared by several row blocks is packed once, before the tiles.
  const bool packBFirst = !p.packedB && t.rowBlocks > 1;
  const int64_t bFloats = gemm::packedFloats(p.n, k, nr);
  if (packBFirst) packEveryB(p, t.batch, nr, scratch.packedB, pool);
  prepareTiles(scratch, pool);
  const int64_t grain = grainFor(flopsOf(t.rows, t.cols, k));
  const int64_t aTileFloats = p.packedA ? 0 : gemm::packedFloats(t.rows, k, mr);
  const int64_t bTileFloats = p.packedB || packBFirst ? 0 : gemm::packedFloats(t.cols, k, nr);
  const int64_t outFloats = t.rows * t.cols;
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
        packBColumns(p, b, col0, cols, nr, buffer + outFloats + aTileFloats);
        bPanels = buffer + outFloats + aTileFloats;
      }
      // Block of k by block of k (a B panel's block, kc × nr, stays in L1),
      // column panel by column panel, while every row group of the block
      // passes over it; later blocks of k add into the tile.
      for (int64_t k0 = 0; k0 < std::max<int64_t>(k, 1); k0 += kKc) {
        const int64_t kc = std::min(kKc, k - k0);
        for (int64_t j = 0; j < cols; j += nr)
          for (int64_t i = 0; i < rows; i += mr)
            kernel.run(kc, aPanels + i * k + k0 * mr, bPanels + j * k + k0 * nr, out + i * cols + j, cols,
                       static_cast<int>(std::min<int64_t>(mr, rows - i)),
                       static_cast<int>(std::min<int64_t>(nr, cols - j)), k0 > 0);
      }
      finishTile(p, epilogue, b, row0, rows, col0, cols, out);
    }
  });
}

/// A convolution's images with their zero borders, once per call, so that
/// the windows are read without bounds checks.
void padImages(const GemmProblem& p, int64_t images, GemmScratch& scratch, ThreadPool& pool) {
  if (!p.conv->needsPadding()) {
    scratch.paddedImages.clear();
    return;
  }
  const int64_t floats = p.conv->paddedFloats();
  scratch.paddedImages.resize(static_cast<size_t>(images * floats));
  pool.parallelFor(images, std::max<int64_t>(1, 65536 / std::max<int64_t>(floats, 1)),
                   [&](int64_t begin, int64_t end, int) {
                     for (int64_t b = begin; b < end; ++b)
                       p.conv->padImage(static_cast<const float*>(p.b) + p.bOffsets[static_cast<size_t>(b)],
                                        scratch.paddedImages.data() + b * floats);
                   });
}

/// A convolution: per image, Cᵀ = im2col(x)ᵀ · Wᵀ in blocks of output
/// positions (the kernel's rows) × every output channel (its columns),
/// group by group, through the indirect kernel; each block transposed back
/// to channels × positions for the epilogue.
void convolutionGemm(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const gemm::ConvGeometry& g = *p.conv;
  const int64_t groups = g.groups(), perGroup = p.m / groups;
  const MicroKernel& kernel = gemm::convolutionKernel(perGroup);
  const int mr = kernel.mr, nr = kernel.nr;
  const int64_t images = static_cast<int64_t>(p.bOffsets.size()), k = p.k, channels = p.m, positions = p.n;
  padImages(p, images, scratch, pool);
  const int64_t groupFloats = gemm::packedFloats(perGroup, k, nr);  // one group's packed filters
  const float* filters;
  if (p.packedA) {
    filters = p.packedA->matrix(0);
  } else {
    scratch.packedFilters.resize(static_cast<size_t>(groups * groupFloats));
    for (int64_t gi = 0; gi < groups; ++gi)
      gemm::packA({static_cast<const float*>(p.a) + gi * perGroup * k, k, 1}, 0, perGroup, k, nr,
                  scratch.packedFilters.data() + gi * groupFloats);
    filters = scratch.packedFilters.data();
  }
  // The kernel's rows are (image, position) pairs, numbered image-major:
  // a block of rows may span images, so a late layer's few positions per
  // image (a 1×1 or 2×2 map) still fill the register block. Blocks whose
  // tile (rows × channels) stays within 256 KiB; smaller blocks when there
  // are fewer than threads.
  const int64_t total = images * positions;
  int64_t block = std::clamp<int64_t>(65536 / std::max<int64_t>(channels, 1) / mr * mr, mr, 1024);
  block = blockForThreads(total, block, mr, pool.size(), flopsOf(total, channels, k));
  block = std::min(block, (total + mr - 1) / mr * mr);
  const int64_t blocks = (total + block - 1) / block;
  const int64_t grain = grainFor(flopsOf(block, channels, k));
  const int64_t tileFloats = block * channels;
  auto imageOf = [&](int64_t b) {
    return scratch.paddedImages.empty() ? static_cast<const float*>(p.b) + p.bOffsets[static_cast<size_t>(b)]
                                        : scratch.paddedImages.data() + b * g.paddedFloats();
  };
  prepareTiles(scratch, pool);
  pool.parallelFor(blocks, grain, [&](int64_t begin, int64_t end, int chunk) {
    float* flipped = floats<float>(scratch.tiles[static_cast<size_t>(chunk)], static_cast<size_t>(2 * tileFloats));
    float* out = flipped + tileFloats;
    std::vector<const float*> windows(static_cast<size_t>(mr));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t row0 = task * block, count = std::min(block, total - row0);
      for (int64_t i = 0; i < count; i += mr) {
        const int rows = static_cast<int>(std::min<int64_t>(mr, count - i));
        // Rows past the block's last repeat it: read, never stored.
        for (int r = 0; r < mr; ++r) {
          const int64_t row = row0 + i + std::min(r, rows - 1);
          windows[static_cast<size_t>(r)] =
              imageOf(row / positions) + g.origins()[static_cast<size_t>(row % positions)];
        }
        for (int64_t gi = 0; gi < groups; ++gi) {
          if (gi > 0)  // the next group's channels: every window moves as far
            for (const float*& w : windows) w += g.groupOffset(1);
          for (int64_t j = 0; j < perGroup; j += nr)
            kernel.runIndirect(k, windows.data(), g.offsets().data(), filters + gi * groupFloats + j * k,
                               flipped + i * channels + gi * perGroup + j, channels, rows,
                               static_cast<int>(std::min<int64_t>(nr, perGroup - j)), false);
        }
      }
      // Each image's part of the block, back to channels × positions.
      for (int64_t at = row0; at < row0 + count;) {
        const int64_t b = at / positions, q0 = at % positions, n = std::min(positions - q0, row0 + count - at);
        transposeInto(flipped + (at - row0) * channels, n, channels, out);
        finishTile(p, epilogue, b, 0, channels, q0, n, out);
        at += n;
      }
    }
  });
}

/// A pointwise convolution (ConvGeometry::pointwise): per image the plain
/// GEMM W [M, C] · x [C, positions], the image read as B where it lies
/// and the tiles already NCHW — no window table, no transposed tiles,
/// which a 1×1 layer of few input channels (k = 64) spent as long on as
/// on its FMAs.
void pointwiseConvolution(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  GemmProblem plain = p;
  plain.conv = nullptr;
  plain.transposeB = false;
  packedGemm(plain, epilogue, scratch, pool);
}

/// A 2-D depthwise convolution (or a pool: the same with no filters),
/// NCHW: per image and block of channels, each channel's plane copied with
/// its border and split by column phase (so that every stride reads
/// contiguous runs), then the kernel computes its output rows a few
/// vectors at a time straight into the block's NCHW tile for the epilogue
/// — no channels-last copy of the image and no transposed tiles, which
/// cost depthwise layers more than their FMAs.
void depthwisePlanes(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const gemm::ConvGeometry& g = *p.conv;
  const MicroKernel& kernel = gemm::hostMicroKernel();
  const gemm::DepthwisePlane plane = g.plane(kernel.depthwiseWidth);
  const int64_t images = static_cast<int64_t>(p.bOffsets.size()), taps = p.k, channels = p.m, positions = p.n;
  const int64_t inPlane = g.imageFloats() / std::max<int64_t>(channels, 1);
  using PoolKind = gemm::PoolWindow::Kind;
  const PoolKind poolKind = g.pool().kind;
  // An average pool is the depthwise sum with every weight 1, then each
  // position divided by its window's count.
  const std::vector<float> ones(poolKind == PoolKind::Average ? static_cast<size_t>(taps) : 0, 1.0f);
  const auto* filters = static_cast<const float*>(p.packedA ? p.packedA->matrix(0) : p.a);
  const float border = poolKind == PoolKind::Max ? -INFINITY : 0.0f;
  // Blocks of channels whose tile stays within 256 KiB; smaller when there
  // are fewer than threads and work for more than one.
  int64_t block = std::clamp<int64_t>(65536 / std::max<int64_t>(positions, 1), 1, channels);
  block = blockForThreads(channels, block, 1, (pool.size() + images - 1) / images,
                          flopsOf(images * channels, positions, taps));
  const int64_t blocks = (channels + block - 1) / block;
  const int64_t tileFloats = block * positions, phaseFloats = plane.sx * plane.phaseFloats;
  prepareTiles(scratch, pool);
  pool.parallelFor(
      images * blocks, grainFor(flopsOf(block, positions, taps)), [&](int64_t begin, int64_t end, int chunk) {
        float* tile =
            floats<float>(scratch.tiles[static_cast<size_t>(chunk)], static_cast<size_t>(tileFloats + phaseFloats));
        float* phases = tile + tileFloats;
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / blocks, c0 = task % blocks * block, count = std::min(block, channels - c0);
          const float* image = static_cast<const float*>(p.b) + p.bOffsets[static_cast<size_t>(b)];
          for (int64_t c = c0; c < c0 + count; ++c) {
            float* out = tile + (c - c0) * positions;
            g.padPlanePhases(image + c * inPlane, plane, phases, border);
            if (poolKind == PoolKind::Max) {
              kernel.maxPoolPlane(plane, phases, out);
            } else if (poolKind == PoolKind::Average) {
              kernel.depthwisePlane(plane, phases, ones.data(), out);
              for (int64_t oy = 0; oy < plane.oh; ++oy)
                for (int64_t ox = 0; ox < plane.ow; ++ox) out[oy * plane.ow + ox] /= g.divisor(oy, ox);
            } else {
              kernel.depthwisePlane(plane, phases, filters + c * taps, out);
            }
          }
          finishTile(p, epilogue, b, c0, count, 0, positions, tile);
        }
      });
}

/// Any other depthwise convolution (1-D, 3-D, output rows shorter than a
/// vector): each image copied channels-last with its zero border, then per
/// image and block of channels the kernel computes a vector of channels
/// for several positions at once (every load contiguous, whatever the
/// stride); the positions × channels tile is transposed back to NCHW for
/// the epilogue.
void depthwiseConv(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const gemm::ConvGeometry& g = *p.conv;
  const MicroKernel& kernel = gemm::hostMicroKernel();
  const int64_t images = static_cast<int64_t>(p.bOffsets.size()), taps = p.k, channels = p.m, positions = p.n;
  const int64_t imageFloats = g.paddedFloats();
  scratch.paddedImages.resize(static_cast<size_t>(images * imageFloats));
  pool.parallelFor(images, std::max<int64_t>(1, 65536 / std::max<int64_t>(imageFloats, 1)),
                   [&](int64_t begin, int64_t end, int) {
                     for (int64_t b = begin; b < end; ++b)
                       g.padImageChannelsLast(static_cast<const float*>(p.b) + p.bOffsets[static_cast<size_t>(b)],
                                              scratch.paddedImages.data() + b * imageFloats);
                   });
  const float* weights;
  if (p.packedA) {
    weights = p.packedA->matrix(0);
  } else {
    scratch.packedFilters.resize(static_cast<size_t>(taps * channels));
    transposeInto(static_cast<const float*>(p.a), channels, taps, scratch.packedFilters.data());
    weights = scratch.packedFilters.data();
  }
  // Blocks of whole vectors of channels whose tile stays within 256 KiB;
  // smaller when there are fewer than threads and work for more than one.
  const int64_t width = kernel.depthwiseWidth;
  const int64_t groups = (channels + width - 1) / width;
  int64_t block = std::clamp<int64_t>(65536 / std::max<int64_t>(positions * width, 1), 1, groups);
  block = blockForThreads(groups, block, 1, (pool.size() + images - 1) / images,
                          flopsOf(images * channels, positions, taps));
  const int64_t blocks = (groups + block - 1) / block;
  const int64_t grain = grainFor(flopsOf(block * width, positions, taps));
  const int64_t tileFloats = block * width * positions;
  prepareTiles(scratch, pool);
  pool.parallelFor(images * blocks, grain, [&](int64_t begin, int64_t end, int chunk) {
    float* flipped = floats<float>(scratch.tiles[static_cast<size_t>(chunk)], static_cast<size_t>(2 * tileFloats));
    float* out = flipped + tileFloats;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / blocks, c0 = task % blocks * block * width;
      const int64_t count = std::min(block * width, channels - c0);
      const float* image = scratch.paddedImages.data() + b * imageFloats;
      for (int64_t c = c0; c < c0 + count; c += width)
        kernel.depthwise(taps, image + c, channels, g.origins().data(), positions, g.offsets().data(), weights + c,
                         static_cast<int>(std::min(width, c0 + count - c)), flipped + (c - c0), count);
      transposeInto(flipped, positions, count, out);
      finishTile(p, epilogue, b, c0, count, 0, positions, out);
    }
  });
}

/// A transposed convolution: each image packed once as B, then per image
/// and block of output channels the GEMM rows of those channels (every
/// kernel point of each) into a column tile, added into the output block
/// (col2im), and the epilogue on it.
void transposedConvolution(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const gemm::ConvTransposeGeometry& g = *p.convTranspose;
  const MicroKernel& kernel = gemm::hostMicroKernel();
  const int mr = kernel.mr, nr = kernel.nr;
  const int64_t images = static_cast<int64_t>(p.bOffsets.size()), k = p.k, n = p.n;
  const int64_t kk = g.kernelPoints(), outChannels = g.outChannels(), outPositions = g.outPositions();
  const int64_t bFloats = gemm::packedFloats(n, k, nr);
  packEveryB(p, images, nr, scratch.packedB, pool);
  const float* filters;
  if (p.packedA) {
    filters = p.packedA->matrix(0);
  } else {
    scratch.packedFilters.resize(static_cast<size_t>(gemm::packedFloats(p.m, k, mr)));
    gemm::packA({static_cast<const float*>(p.a), 1, p.m}, 0, p.m, k, mr, scratch.packedFilters.data());
    filters = scratch.packedFilters.data();
  }
  // Blocks of output channels whose rows start on a panel of A (a multiple
  // of mr / gcd(∏kernel, mr) channels), the column tile within 256 KiB.
  const int64_t unit = mr / std::gcd(kk, static_cast<int64_t>(mr));
  int64_t block = std::max<int64_t>(unit, 65536 / std::max<int64_t>(kk * n, 1) / unit * unit);
  block = blockForThreads(outChannels, block, unit, (pool.size() + images - 1) / images, flopsOf(images * p.m, n, k));
  block = std::min(block, outChannels);
  const int64_t blocks = (outChannels + block - 1) / block;
  const int64_t colFloats = block * kk * n, outFloats = block * outPositions;
  prepareTiles(scratch, pool);
  pool.parallelFor(images * blocks, 1, [&](int64_t begin, int64_t end, int chunk) {
    float* col = floats<float>(scratch.tiles[static_cast<size_t>(chunk)], static_cast<size_t>(colFloats + outFloats));
    float* out = col + colFloats;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / blocks, co0 = task % blocks * block, count = std::min(block, outChannels - co0);
      const int64_t row0 = co0 * kk, rows = count * kk;
      const float* bPanels = scratch.packedB.data() + b * bFloats;
      for (int64_t j = 0; j < n; j += nr)
        for (int64_t i = 0; i < rows; i += mr)
          kernel.run(k, filters + (row0 + i) * k, bPanels + j * k, col + i * n + j, n,
                     static_cast<int>(std::min<int64_t>(mr, rows - i)), static_cast<int>(std::min<int64_t>(nr, n - j)),
                     false);
      g.col2im(col, count, out);
      const int64_t first = (b * outChannels + co0) * outPositions;
      epilogue(first, first + count * outPositions, out);
    }
  });
}

/// f64: OpenBLAS's dgemm per row tile (its packing redone per call).
void blasGemm(const GemmProblem& p, const TileEpilogue& epilogue, GemmScratch& scratch, ThreadPool& pool) {
  const int64_t batch = static_cast<int64_t>(p.aOffsets.size());
  const int64_t rows = std::clamp<int64_t>(262144 / std::max<int64_t>(p.n, 1), 16, 512);
  const int64_t rowTilesPerBatch = (p.m + rows - 1) / rows;
  prepareTiles(scratch, pool);
  // All parallelism is the pool's: OpenBLAS runs single-threaded in each
  // task (its own threads would oversubscribe the cores).
  openblas_set_num_threads(1);
  const auto lda = static_cast<blasint>(std::max<int64_t>(p.k, 1));
  const auto ldb = static_cast<blasint>(std::max<int64_t>(p.transposeB ? p.k : p.n, 1));
  const CBLAS_TRANSPOSE tb = p.transposeB ? CblasTrans : CblasNoTrans;
  const int64_t grain = grainFor(flopsOf(std::min(rows, p.m), p.n, p.k));
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

PackedWeights packWeightsA(const float* a, int64_t matrices, int64_t m, int64_t k, int panelRows) {
  PackedWeights w;
  w.sourceFloats = std::max<int64_t>(m * k, 1);
  w.packedFloats = gemm::packedFloats(m, k, panelRows);
  w.data.resize(static_cast<size_t>(matrices * w.packedFloats));
  for (int64_t i = 0; i < matrices; ++i)
    gemm::packA({a + i * m * k, k, 1}, 0, m, k, panelRows, w.data.data() + i * w.packedFloats);
  return w;
}

PackedWeights packFilters(const float* w, int64_t m, int64_t k, const gemm::ConvGeometry& conv) {
  if (conv.pointwise()) return packWeightsA(w, 1, m, k, gemm::hostMicroKernel().mr);
  const int64_t groups = conv.groups();
  PackedWeights packed = packWeightsA(w, groups, m / groups, k, gemm::convolutionKernel(m / groups).nr);
  packed.sourceFloats = std::max<int64_t>(m * k, 1);  // matrix(0): the first group's
  packed.packedFloats *= groups;
  return packed;
}

PackedWeights packDepthwiseFilters(const float* w, int64_t channels, int64_t taps, const gemm::ConvGeometry& conv) {
  PackedWeights packed;
  packed.sourceFloats = std::max<int64_t>(channels * taps, 1);
  packed.packedFloats = channels * taps;
  packed.data.resize(static_cast<size_t>(channels * taps));
  if (conv.depthwiseByPlanes())
    std::copy(w, w + channels * taps, packed.data.data());
  else
    transposeInto(w, channels, taps, packed.data.data());
  return packed;
}

PackedWeights packTransposedFilters(const float* w, int64_t channels, int64_t rows) {
  const int mr = gemm::hostMicroKernel().mr;
  PackedWeights packed;
  packed.sourceFloats = std::max<int64_t>(channels * rows, 1);
  packed.packedFloats = gemm::packedFloats(rows, channels, mr);
  packed.data.resize(static_cast<size_t>(packed.packedFloats));
  gemm::packA({w, 1, rows}, 0, rows, channels, mr, packed.data.data());  // Wᵀ: row r, column c at w[c·rows + r]
  return packed;
}

namespace {

MxPanels panelsOf(const ir::MxWeights& mx, int panel) {
  MxPanels p;
  p.format = mx.format;
  p.panel = panel;
  p.rows = mx.rows;
  p.k = mx.cols;
  p.panels = (mx.rows + panel - 1) / panel;
  const bool wide = !ir::mxHasScales(mx.format);  // f16, bf16: two bytes a code
  p.blocks = wide ? 0 : ir::mxRowBlocks(mx.cols);
  p.codes.assign(static_cast<size_t>(p.panels * p.k * panel * (wide ? 2 : 1)), 0);
  p.scales.assign(static_cast<size_t>(p.panels * p.blocks * panel), 0.0f);  // rows past the last: 0
  const int bits = ir::mxFormatInfo(mx.format).bits;
  const auto* elements = reinterpret_cast<const uint8_t*>(mx.elements.data());
  const auto* scales = reinterpret_cast<const uint8_t*>(mx.scales.data());
  const int64_t rowBytes = ir::mxRowBytes(mx.format, mx.cols);
  for (int64_t row = 0; row < mx.rows; ++row) {
    const int64_t g = row / panel, r = row % panel;
    const uint8_t* in = elements + row * rowBytes;
    for (int64_t kk = 0; kk < mx.cols; ++kk) {
      const size_t at = static_cast<size_t>((g * p.k + kk) * panel + r);
      if (wide) {
        p.codes[2 * at] = in[2 * kk];
        p.codes[2 * at + 1] = in[2 * kk + 1];
      } else {
        p.codes[at] = ir::mxCode(in, bits, kk);
      }
    }
    for (int64_t b = 0; b < p.blocks; ++b)
      p.scales[static_cast<size_t>((g * p.blocks + b) * panel + r)] = ir::mxScaleValue(scales[row * p.blocks + b]);
  }
  return p;
}

}  // namespace

MxPanels packMxWeightsB(const ir::MxWeights& mx) { return panelsOf(mx, gemm::hostMicroKernel().nr); }
MxPanels packMxFilters(const ir::MxWeights& mx, const gemm::ConvGeometry& conv) {
  return panelsOf(mx, conv.pointwise() ? gemm::hostMicroKernel().mr : gemm::convolutionKernel(mx.rows).nr);
}

void MxPanels::decode(PackedWeights& out, ThreadPool& pool) const {
  out.sourceFloats = std::max<int64_t>(rows * k, 1);
  out.packedFloats = gemm::packedFloats(rows, k, panel);
  out.data.resize(static_cast<size_t>(out.packedFloats));
  float* packed = out.data.data();
  const int64_t panelFloats = k * panel;
  // Chunks of at least ~16k values: below that, threads cost more than they save.
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(panelFloats, 1));
  pool.parallelFor(panels, grain, [&](int64_t begin, int64_t end, int) {
    if (!ir::mxHasScales(format)) {  // f16, bf16: little-endian bit patterns
      for (int64_t i = begin * panelFloats; i < end * panelFloats; ++i)
        packed[i] = ir::mxWideValue(format, codes.data() + 2 * i);
      return;
    }
    const float* table = ir::mxDecodeTable(format);
    for (int64_t g = begin; g < end; ++g)
      for (int64_t b = 0; b < blocks; ++b) {
        const float* scale = scales.data() + (g * blocks + b) * panel;
        for (int64_t kk = b * ir::kMxBlock; kk < std::min<int64_t>(k, (b + 1) * ir::kMxBlock); ++kk) {
          const uint8_t* code = codes.data() + (g * k + kk) * panel;
          float* to = packed + (g * k + kk) * panel;
          for (int r = 0; r < panel; ++r) to[r] = table[code[r]] * scale[r];
        }
      }
  });
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

void gemmWithEpilogue(const GemmProblem& problem, const TileEpilogue& epilogue, GemmScratch& scratch,
                      ThreadPool& pool) {
  if (problem.aOffsets.empty() || problem.m == 0 || problem.n == 0) return;
  // An MX weight is decoded here, on every call, into this thread's
  // scratch panels — the panels a constant f32 weight is packed into once at
  // load, so the results are the same bits — and only the MX codes stay in
  // memory between calls.
  GemmProblem dequantized;
  const GemmProblem* use = &problem;
  if (const MxPanels* mx = problem.mxA ? problem.mxA : problem.mxB) {
    mx->decode(scratch.mxPacked, pool);
    dequantized = problem;
    (problem.mxA ? dequantized.packedA : dequantized.packedB) = &scratch.mxPacked;
    use = &dequantized;
  }
  const GemmProblem& p = *use;
  if (p.dtype == ir::DType::F64)
    blasGemm(p, epilogue, scratch, pool);
  else if (p.convTranspose)
    transposedConvolution(p, epilogue, scratch, pool);
  else if (p.conv && p.conv->depthwiseByPlanes())
    depthwisePlanes(p, epilogue, scratch, pool);
  else if (p.conv && p.conv->depthwise())
    depthwiseConv(p, epilogue, scratch, pool);
  else if (p.conv && p.conv->pointwise())
    pointwiseConvolution(p, epilogue, scratch, pool);
  else if (p.conv)
    convolutionGemm(p, epilogue, scratch, pool);
  else
    packedGemm(p, epilogue, scratch, pool);
}

}  // namespace graphc::runtime::cpu
