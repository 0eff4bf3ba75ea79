#include "runtime/cpu/Attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/cpu/gemm/MicroKernel.h"
#include "runtime/cpu/gemm/Packing.h"

namespace graphc::runtime::cpu {

namespace {

using gemm::MatrixView;
using gemm::MicroKernel;

/// Query rows a task takes: their packed Q (64 × d) and output rows stay in
/// L1/L2 for every block of keys.
constexpr int64_t kRowBlock = 64;
/// Keys a step takes: the scores of a row block (64 × 256 floats, 64 KiB)
/// and the packed K and V blocks stay in L2.
constexpr int64_t kKeyBlock = 256;

constexpr float kLowest = -std::numeric_limits<float>::infinity();

/// One thread's buffers, kept from call to call: fresh ones would cost page
/// faults on every run of a model.
struct Scratch {
  std::vector<float> k, scores, v, o, max;
  std::vector<double> sum;
  std::vector<const float*> qRows, scoreRows;
  std::vector<int64_t> offsets;  // 0, 1, 2, ...: A's rows read where they lie
  static Scratch& forThisThread() {
    thread_local Scratch s;
    return s;
  }
};

/// C = A · B (+= with `accumulate`), A's rows read in place (`rows`, as
/// many pointers as rows rounded up to the micro-kernel's), B packed:
/// count × cols, `depth` deep, C's rows ldc apart.
void multiply(const MicroKernel& mk, const float* const* rows, int64_t count, int64_t cols, int64_t depth,
              const int64_t* offsets, const float* b, float* c, int64_t ldc, bool accumulate) {
  for (int64_t r0 = 0; r0 < count; r0 += mk.mr)
    for (int64_t c0 = 0; c0 < cols; c0 += mk.nr)
      mk.runIndirect(depth, rows + r0, offsets, b + c0 * depth, c + r0 * ldc + c0, ldc,
                     static_cast<int>(std::min<int64_t>(mk.mr, count - r0)),
                     static_cast<int>(std::min<int64_t>(mk.nr, cols - c0)), accumulate);
}

bool allFinite(const float* x, int64_t n) {
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) finite &= std::isfinite(x[i]);
  return finite;
}

/// Row pointers base + r·stride for r < count, padded with the first to a
/// whole number of micro-kernel panels (the kernel reads every pointer).
void rowPointers(std::vector<const float*>& out, const float* base, int64_t stride, int64_t count, int mr) {
  out.assign(static_cast<size_t>((count + mr - 1) / mr * mr), base);
  for (int64_t r = 0; r < count; ++r) out[static_cast<size_t>(r)] = base + r * stride;
}

/// Rows [q0, q0 + rows) of batch index b, every block of keys.
void rowBlock(const AttentionProblem& p, const ScoresEpilogue& epilogue, const MicroKernel& mk, int64_t b, int64_t q0,
              int64_t rows, Scratch& s) {
  const auto at = static_cast<size_t>(b);
  const int64_t block = std::min(p.keys, kKeyBlock);
  s.k.resize(static_cast<size_t>(gemm::packedFloats(block, p.d, mk.nr)));
  s.scores.resize(static_cast<size_t>(rows * block));
  s.v.resize(static_cast<size_t>(gemm::packedFloats(p.dv, block, mk.nr)));
  s.o.assign(static_cast<size_t>(rows * p.dv), 0.0f);
  s.max.assign(static_cast<size_t>(rows), kLowest);
  s.sum.assign(static_cast<size_t>(rows), 0.0);
  if (s.offsets.size() < static_cast<size_t>(std::max(p.d, block))) {
    s.offsets.resize(static_cast<size_t>(std::max(p.d, block)));
    for (size_t i = 0; i < s.offsets.size(); ++i) s.offsets[i] = static_cast<int64_t>(i);
  }
  rowPointers(s.qRows, p.q + p.qOffsets[at] + q0 * p.d, p.d, rows, mk.mr);
  rowPointers(s.scoreRows, s.scores.data(), block, rows, mk.mr);
  const MatrixView k{p.k + p.kOffsets[at], p.keys, 1};
  for (int64_t j0 = 0; j0 < p.keys; j0 += block) {
    const int64_t n = std::min(block, p.keys - j0);
    float* scores = s.scores.data();
    gemm::packB(k, j0, n, p.d, mk.nr, s.k.data());
    multiply(mk, s.qRows.data(), rows, n, p.d, s.offsets.data(), s.k.data(), scores, block, false);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t first = (b * p.queries + q0 + r) * p.keys + j0;
      epilogue(first, first + n, scores + r * block);
    }
    // The online softmax: this block's exponentials against the row's new
    // maximum, the earlier blocks' sum and output rescaled to it.
    bool contributes = false;  // some row has a score above −inf (or NaN) in this block
    for (int64_t r = 0; r < rows; ++r) {
      float* row = scores + r * block;
      const auto i = static_cast<size_t>(r);
      const float blockMax = mk.rowMax(row, n), before = s.max[i];
      if (blockMax == kLowest) {  // every score of the block −inf: it adds nothing to the row
        std::fill(row, row + n, 0.0f);
        continue;
      }
      contributes = true;
      const float max = std::isnan(blockMax) || std::isnan(before) ? std::numeric_limits<float>::quiet_NaN()
                                                                   : std::max(before, blockMax);
      s.sum[i] = s.sum[i] * std::exp(before - max) + mk.expAndSum(row, n, max);
      if (j0 > 0 && before != max) {
        const float rescale = std::exp(before - max);
        for (float* o = s.o.data() + r * p.dv; o != s.o.data() + (r + 1) * p.dv; ++o) *o *= rescale;
      }
      s.max[i] = max;
    }
    const float* values = p.v + p.vOffsets[at] + j0 * p.dv;
    // A block every row masks adds 0 · V: skipped (a causal mask's blocks
    // above the diagonal) unless V holds an inf or NaN there, whose 0 · inf
    // the unfused product would carry into the result.
    if (!contributes && allFinite(values, n * p.dv)) continue;
    gemm::packB({values, p.dv, 1}, 0, p.dv, n, mk.nr, s.v.data());
    multiply(mk, s.scoreRows.data(), rows, p.dv, n, s.offsets.data(), s.v.data(), s.o.data(), p.dv, true);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<size_t>(r);
    float* out = p.out + (b * p.queries + q0 + r) * p.dv;
    const float* o = s.o.data() + r * p.dv;
    // A row of −inf only has the softmax NaN (exp(−inf − −inf)); so has a
    // row with a NaN, or an inf's NaN (inf − inf), in its sum.
    const bool masked = s.max[i] == kLowest;
    if (masked || std::isnan(s.sum[i])) {
      const bool zero = p.nanRowsToZero || (masked && p.minusInfRowsToZero);
      std::fill(out, out + p.dv, zero ? 0.0f : std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const auto inverse = static_cast<float>(1.0 / s.sum[i]);
    for (int64_t c = 0; c < p.dv; ++c) out[c] = o[c] * inverse;
  }
}

}  // namespace

void attention(const AttentionProblem& p, const ScoresEpilogue& epilogue, ThreadPool& pool) {
  if (p.batch == 0 || p.queries == 0 || p.dv == 0) return;
  const MicroKernel& mk = gemm::hostMicroKernel();
  const int64_t rowBlocks = (p.queries + kRowBlock - 1) / kRowBlock;
  // Query rows split evenly over a batch index's blocks (64 rows and 65
  // are one block of 64 and one of 1 otherwise).
  const int64_t rowsPerBlock = (p.queries + rowBlocks - 1) / rowBlocks;
  pool.parallelFor(p.batch * rowBlocks, 1, [&](int64_t begin, int64_t end, int) {
    Scratch& s = Scratch::forThisThread();
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / rowBlocks, q0 = t % rowBlocks * rowsPerBlock;
      rowBlock(p, epilogue, mk, b, q0, std::min(rowsPerBlock, p.queries - q0), s);
    }
  });
}

}  // namespace graphc::runtime::cpu
