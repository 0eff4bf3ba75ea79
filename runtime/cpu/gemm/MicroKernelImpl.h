// The micro-kernels' one definition, instantiated per instruction set by
// the MicroKernel*.cpp files (each includes this inside its own namespace
// and compiles with its own target flags). `V` is the vector type's traits:
// width, zero, load, broadcast, fma, add, sub, store, maxNan and
// expNonPositive (exp of x ≤ 0 as the cpu kernels' expF32: 0 below
// ln(FLT_MIN), NaN kept).
//
// Included only by those files: no include guard on purpose, no namespace.

/// Stores the accumulators into rows × cols of the ROWS × NR block at c,
/// or with `add` adds them to what is there (c + acc as fma(acc, 1, c):
/// one rounding, as an add).
template <class V, int ROWS, int NV>
inline void storeBlock(typename V::type (&acc)[ROWS][NV], float* c, int64_t ldc, int rows, int cols, bool add = false) {
  constexpr int W = V::width, NR = W * NV;
  if (rows == ROWS && cols == NR) {
    const float one = 1.0f;
    const typename V::type ones = V::broadcast(&one);
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        float* at = c + i * ldc + j * W;
        V::store(at, add ? V::fma(acc[i][j], ones, V::load(at)) : acc[i][j]);
      }
    return;
  }
  // A partial block (the last rows or columns): through a local tile.
  float tile[ROWS * NR];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) V::store(tile + i * NR + j * W, acc[i][j]);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) c[i * ldc + j] = add ? c[i * ldc + j] + tile[i * NR + j] : tile[i * NR + j];
}

/// How many reduction points a kernel sums in registers, from zero, before
/// adding the partial sum into C. One chain of FMAs over the whole k drifts
/// from the exact sum as √k: at k = 4096 four times farther than the BLAS
/// eager PyTorch calls, whose kernels sum blocks apart. Adding a block's
/// sum into C costs a load and a store per accumulator every kSumBlock
/// steps (a few per cent of the FMAs).
constexpr int64_t kSumBlock = 64;

/// The first ROWS rows (rows ≤ ROWS) of an MR-row packed A panel times a
/// packed B panel.
template <class V, int MR, int ROWS, int NV>
void blockKernel(int64_t k, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                 bool accumulate) {
  constexpr int W = V::width, NR = W * NV;
  typename V::type acc[ROWS][NV];
  for (int64_t p0 = 0; p0 == 0 || p0 < k; p0 += kSumBlock) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
    const int64_t end = std::min(k, p0 + kSumBlock);
    for (int64_t p = p0; p < end; ++p) {
      typename V::type bv[NV];
      // A few-row block streams B faster than the hardware prefetcher brings
      // it from L2: ask for the panel's lines some steps ahead.
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) {
        if constexpr (ROWS < MR) __builtin_prefetch(b + 32 * NR + j * W);
        bv[j] = V::load(b + j * W);
      }
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) {
        const typename V::type av = V::broadcast(a + i);
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
      }
      a += MR;
      b += NR;
    }
    storeBlock<V, ROWS, NV>(acc, c, ldc, rows, cols, accumulate || p0 > 0);
  }
}

/// C = A · B on a packed A panel (k × MR) and a packed B panel (k × NR);
/// C += A · B with `accumulate` (a later block of k). A block of a few
/// rows (a linear layer at batch 1 or 2) runs a kernel of that many rows:
/// the full MR-row block would do MR / rows times the FMAs it needs.
template <class V, int MR, int NV>
void microKernel(int64_t k, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                 bool accumulate) {
  if constexpr (MR % 4 == 0) {
    if (rows <= MR / 4) return blockKernel<V, MR, MR / 4, NV>(k, a, b, c, ldc, rows, cols, accumulate);
    if (rows <= MR / 2) return blockKernel<V, MR, MR / 2, NV>(k, a, b, c, ldc, rows, cols, accumulate);
  }
  blockKernel<V, MR, MR, NV>(k, a, b, c, ldc, rows, cols, accumulate);
}

/// C = A · B with A read through an indirection: A[i, p] = rows[i][offsets[p]]
/// (a convolution: row i is an output position's window origin in the
/// padded image, offsets[p] the reduction point's offset from it; an
/// attention kernel: row i a row of Q or of the scores, offsets[p] = p);
/// C += A · B with `accumulate`.
template <class V, int MR, int NV>
void indirectKernel(int64_t k, const float* const* rows, const int64_t* offsets, const float* b, float* c, int64_t ldc,
                    int nrows, int cols, bool accumulate) {
  constexpr int W = V::width, NR = W * NV;
  const float* row[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) row[i] = rows[i];
  typename V::type acc[MR][NV];
  for (int64_t p0 = 0; p0 == 0 || p0 < k; p0 += kSumBlock) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
    const int64_t end = std::min(k, p0 + kSumBlock);
    for (int64_t p = p0; p < end; ++p) {
      const int64_t at = offsets[p];
      typename V::type bv[NV];
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) bv[j] = V::load(b + j * W);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        const typename V::type av = V::broadcast(row[i] + at);
#pragma GCC unroll 8
        for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
      }
      b += NR;
    }
    storeBlock<V, MR, NV>(acc, c, ldc, nrows, cols, accumulate || p0 > 0);
  }
}

/// N vectors of output row `oy` from column `ox` on: N independent
/// chains, so the taps' latency is covered. kMax: the window's maximum (a
/// max pool; no weights) instead of its weighted sum.
template <class V, int N, bool kMax>
inline void depthwiseVectors(const DepthwisePlane& g, const float* phases, const float* weights, int64_t oy, int64_t ox,
                             float* out) {
  constexpr int W = V::width;
  constexpr float lowest = -__builtin_inff();
  typename V::type acc[N];
#pragma GCC unroll 4
  for (int v = 0; v < N; ++v) acc[v] = kMax ? V::broadcast(&lowest) : V::zero();
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const float* row = phases + (oy * g.sy + ky * g.dy) * g.rowLength + ox;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const float* at = row + g.tapColumns[static_cast<std::size_t>(kx)];
      if constexpr (kMax) {
#pragma GCC unroll 4
        for (int v = 0; v < N; ++v) acc[v] = V::maxNan(acc[v], V::load(at + v * W));
      } else {
        const typename V::type w = V::broadcast(weights + ky * g.kw + kx);
#pragma GCC unroll 4
        for (int v = 0; v < N; ++v) acc[v] = V::fma(V::load(at + v * W), w, acc[v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < N; ++v) {
    const int64_t at = ox + v * W;
    if (at + W <= g.ow) {
      V::store(out + at, acc[v]);
    } else {  // the row's last, partial vector
      float tile[W];
      V::store(tile, acc[v]);
      for (int64_t i = 0; at + i < g.ow; ++i) out[at + i] = tile[i];
    }
  }
}

/// Each output row of a plane four vectors at a time.
template <class V, bool kMax>
void planeRows(const DepthwisePlane& g, const float* phases, const float* weights, float* out) {
  constexpr int W = V::width;
  const int64_t vectors = (g.ow + W - 1) / W;
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    float* row = out + oy * g.ow;
    int64_t v = 0;
    for (; v + 4 <= vectors; v += 4) depthwiseVectors<V, 4, kMax>(g, phases, weights, oy, v * W, row);
    switch (vectors - v) {
      case 3: depthwiseVectors<V, 3, kMax>(g, phases, weights, oy, v * W, row); break;
      case 2: depthwiseVectors<V, 2, kMax>(g, phases, weights, oy, v * W, row); break;
      case 1: depthwiseVectors<V, 1, kMax>(g, phases, weights, oy, v * W, row); break;
      default: break;
    }
  }
}

/// MicroKernel::depthwisePlane.
template <class V>
void depthwisePlane(const DepthwisePlane& g, const float* phases, const float* weights, float* out) {
  planeRows<V, false>(g, phases, weights, out);
}

/// MicroKernel::maxPoolPlane.
template <class V>
void maxPoolPlane(const DepthwisePlane& g, const float* phases, float* out) {
  planeRows<V, true>(g, phases, nullptr, out);
}

/// MicroKernel::rowMax.
template <class V>
float rowMax(const float* s, int64_t n) {
  constexpr int W = V::width;
  constexpr float lowest = -__builtin_inff();
  typename V::type m = V::broadcast(&lowest);
  int64_t j = 0;
  for (; j + W <= n; j += W) m = V::maxNan(m, V::load(s + j));
  float lanes[W];
  V::store(lanes, m);
  float r = lowest;
  for (int i = 0; i < W; ++i) r = lanes[i] != lanes[i] || lanes[i] > r ? lanes[i] : r;
  for (; j < n; ++j) r = s[j] != s[j] || s[j] > r ? s[j] : r;
  return r;
}

/// MicroKernel::expAndSum.
template <class V>
float expAndSum(float* s, int64_t n, float max) {
  constexpr int W = V::width;
  const typename V::type m = V::broadcast(&max);
  typename V::type sum = V::zero();
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    const typename V::type e = V::expNonPositive(V::sub(V::load(s + j), m));
    V::store(s + j, e);
    sum = V::add(sum, e);
  }
  float lanes[W];
  V::store(lanes, sum);
  float total = 0.0f;
  for (int i = 0; i < W; ++i) total += lanes[i];
  if (j < n) {  // the last, partial vector through a local tile
    float tile[W];
    for (int i = 0; i < W; ++i) tile[i] = j + i < n ? s[j + i] : max;
    V::store(tile, V::expNonPositive(V::sub(V::load(tile), m)));
    for (int64_t i = 0; j + i < n; ++i) {
      s[j + i] = tile[i];
      total += tile[i];
    }
  }
  return total;
}

/// A MicroKernel of these templates: the GEMM's MR × (V::width · NV)
/// register block, this instruction set's own channels-last depthwise
/// kernel (`depthwise`, `depthwiseWidth` channels a call), and the plane
/// kernels and softmax rows on PlaneV vectors.
template <class V, int MR, int NV, class PlaneV = V>
MicroKernel kernelOf(const char* isa, decltype(MicroKernel::depthwise) depthwise, int depthwiseWidth) {
  return {isa,
          MR,
          V::width * NV,
          &microKernel<V, MR, NV>,
          &indirectKernel<V, MR, NV>,
          depthwise,
          depthwiseWidth,
          &depthwisePlane<PlaneV>,
          &maxPoolPlane<PlaneV>,
          &rowMax<PlaneV>,
          &expAndSum<PlaneV>};
}
