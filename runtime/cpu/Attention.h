// Attention in one pass on the CPU backend: out = softmax(scores) · V with
// scores = epilogue(Q · K) over the keys, computed flash-attention style
// (FlashAttention's tiling, the online softmax of Milakov & Gimelshein):
// each task takes one batch index and a block of query rows, and walks the
// keys a block at a time —
//
//   S = Q_rows · K_block               the GEMM micro-kernel, on packed panels
//   S = epilogue(S)                    the kernel's generated code, in place
//   m' = max(m, rowmax S);  P = exp(S − m')
//   l = l·exp(m − m') + rowsum P;  O = O·exp(m − m') + P · V_block
//
// and writes O / l; a block whose scores are all −inf so far (a causal
// mask above the diagonal) skips its P · V. The score matrix exists one
// block of rows × keys at a time, in cache; Q, K and V are read where they lie (per batch offsets, so
// broadcast batch dims cost nothing).
//
// Against the unfused kernels (matmul + epilogue, softmax, matmul): the
// same values up to rounding — the row sum is taken block by block and the
// earlier blocks rescaled, and a block's exponentials are taken against
// its running maximum. A row whose scores are all −inf gives NaN, as the
// softmax of such a row does; a NaN score makes its row NaN (torch's safe
// softmax: zeros for both with nanRowsToZero, for the first with
// minusInfRowsToZero).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/cpu/ThreadPool.h"

namespace graphc::runtime::cpu {

struct AttentionProblem {
  const float* q = nullptr;  // per batch index b: [queries, d] at q + qOffsets[b]
  const float* k = nullptr;  // [d, keys] at k + kOffsets[b] (the first matmul's B)
  const float* v = nullptr;  // [keys, dv] at v + vOffsets[b]
  float* out = nullptr;      // [batch, queries, dv], contiguous
  int64_t batch = 0, queries = 0, keys = 0, d = 0, dv = 0;
  /// torch's safe softmax: zeros for a row whose softmax is NaN, or for a
  /// row whose scores are all −inf.
  bool nanRowsToZero = false, minusInfRowsToZero = false;
  std::vector<int64_t> qOffsets, kOffsets, vOffsets;  // in floats
};

/// Computes the scores [begin, end) of the flattened [batch, queries, keys]
/// score tensor in place, `scores` holding their Q · K.
using ScoresEpilogue = std::function<void(int64_t begin, int64_t end, float* scores)>;

void attention(const AttentionProblem& p, const ScoresEpilogue& epilogue, ThreadPool& pool);

}  // namespace graphc::runtime::cpu
