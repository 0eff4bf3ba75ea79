// Reference kernels of matmul (torch.matmul: vector operands and broadcast
// batch dims), linear (x @ wᵀ + b), grouped_mm (a matmul per group of rows),
// solve_triangular (substitution) and eigh (LAPACK dsyevd per matrix).
#include <algorithm>
#include <cmath>

#include <cblas.h>
#include <fmt/format.h>
#include <lapacke.h>

#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime::reference {

namespace {
/// C[m,n] = A[m,k] @ B[k,n] for row-major blocks (B [n, k] when
/// `transposedB`), accumulated in f64.
void gemmBlock(const Tensor& a, int64_t aOff, const Tensor& b, int64_t bOff, Tensor& c, int64_t cOff, int64_t m,
               int64_t k, int64_t n, bool transposedB = false) {
  const int64_t bRow = transposedB ? 1 : n, bColumn = transposedB ? k : 1;  // B[p, j] at p * bRow + j * bColumn
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += a.getDouble(aOff + i * k + p) * b.getDouble(bOff + p * bRow + j * bColumn);
      c.setDouble(cOff + i * n + j, acc);
    }
}
/// One group of grouped_mm, C[m, n] = A[m, k] @ B (B [k, n], or [n, k]
/// when `transposed`): BLAS for f32 and f64 (a mixture-of-experts layer's
/// experts at real widths; the op runs as a host step, where the f64 loop
/// would be a hundred times slower than eager's torch.mm per expert), an
/// f64-accumulating loop for f16 and bf16.
void groupMatmul(const Tensor& a, int64_t aOff, const Tensor& b, int64_t bOff, Tensor& c, int64_t cOff, int64_t m,
                 int64_t k, int64_t n, bool transposed) {
  if (m == 0) return;
  const auto bm = static_cast<blasint>(m), bk = static_cast<blasint>(k), bn = static_cast<blasint>(n);
  const CBLAS_TRANSPOSE tb = transposed ? CblasTrans : CblasNoTrans;
  const blasint ldb = transposed ? bk : bn;
  if (a.dtype() == ir::DType::F32) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, bm, bn, bk, 1.0f, reinterpret_cast<const float*>(a.data()) + aOff, bk,
                reinterpret_cast<const float*>(b.data()) + bOff, ldb, 0.0f, reinterpret_cast<float*>(c.data()) + cOff,
                bn);
    return;
  }
  if (a.dtype() == ir::DType::F64) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, bm, bn, bk, 1.0, reinterpret_cast<const double*>(a.data()) + aOff, bk,
                reinterpret_cast<const double*>(b.data()) + bOff, ldb, 0.0, reinterpret_cast<double*>(c.data()) + cOff,
                bn);
    return;
  }
  gemmBlock(a, aOff, b, bOff, c, cOff, m, k, n, transposed);
}
}  // namespace

MatmulLayout matmulLayout(std::vector<int64_t> sa, std::vector<int64_t> sb) {
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  MatmulLayout l{sa[sa.size() - 2], sa.back(), sb.back(), {}, {}};
  std::vector<int64_t> batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  const size_t rank = std::max(batchA.size(), batchB.size());
  std::vector<int64_t> batch(rank);
  for (size_t i = 0; i < rank; ++i) {  // broadcast the batch dims, aligned at the right
    int64_t da = i < rank - batchA.size() ? 1 : batchA[i - (rank - batchA.size())];
    int64_t db = i < rank - batchB.size() ? 1 : batchB[i - (rank - batchB.size())];
    batch[i] = da == 1 ? db : da;
  }
  l.aOffsets = broadcastIndices(batch, batchA);
  l.bOffsets = broadcastIndices(batch, batchB);
  for (int64_t& o : l.aOffsets) o *= l.m * l.k;
  for (int64_t& o : l.bOffsets) o *= l.k * l.n;
  return l;
}

Tensor matmul(const Tensor& a, const Tensor& b, const std::vector<int64_t>& shape) {
  const MatmulLayout l = matmulLayout(a.shape(), b.shape());
  Tensor out(a.dtype(), shape);
  for (size_t bi = 0; bi < l.aOffsets.size(); ++bi)
    gemmBlock(a, l.aOffsets[bi], b, l.bOffsets[bi], out, static_cast<int64_t>(bi) * l.m * l.n, l.m, l.k, l.n);
  return out;
}

Tensor linear(const std::vector<Tensor>& operands, const std::vector<int64_t>& shape) {
  const Tensor& x = operands[0];
  const Tensor& w = operands[1];
  const int64_t in = w.shape()[1], outFeatures = w.shape()[0];
  const int64_t rows = in == 0 ? checkedNumel(shape) / std::max<int64_t>(outFeatures, 1) : x.numel() / in;
  Tensor out(x.dtype(), shape);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < outFeatures; ++o) {
      double acc = operands.size() > 2 ? operands[2].getDouble(o) : 0.0;
      for (int64_t p = 0; p < in; ++p) acc += x.getDouble(r * in + p) * w.getDouble(o * in + p);
      out.setDouble(r * outFeatures + o, acc);
    }
  return out;
}

Tensor groupedMm(const ir::Node& node, const Tensor& x, const Tensor& w, const Tensor& offs) {
  const ir::Attribute* transposedAttr = node.attrs.find("transposed");
  const bool transposed = transposedAttr && transposedAttr->b;
  const int64_t rows = x.shape()[0], k = x.shape()[1], groups = w.shape()[0], n = w.shape()[transposed ? 1 : 2];
  Tensor out(x.dtype(), {rows, n});
  int64_t start = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t end = offs.getInt(g);
    if (end < start)
      throw ir::LocatedError(
          node.loc, fmt::format("grouped_mm: offset {} of group {} is below the previous group's end {} (offsets "
                                "are cumulative row counts and must not decrease)",
                                end, g, start));
    const int64_t from = std::min(start, rows), to = std::min(end, rows);
    groupMatmul(x, from * k, w, g * k * n, out, from * n, to - from, k, n, transposed);
    start = end;
  }
  for (int64_t i = std::min(start, rows) * n; i < rows * n; ++i) out.setDouble(i, 0.0);
  return out;
}

Tensor solveTriangular(const ir::Node& node, const Tensor& a, const Tensor& b) {
  const ir::Attribute* upperAttr = node.attrs.find("upper");
  const ir::Attribute* unitAttr = node.attrs.find("unitriangular");
  const bool upper = upperAttr && upperAttr->b, unit = unitAttr && unitAttr->b;
  const int64_t n = a.shape().back(), k = b.shape().back();
  const int64_t batch = n == 0 ? 0 : a.numel() / (n * n);
  Tensor x(b.dtype(), b.shape());
  std::vector<double> column(static_cast<size_t>(n));
  for (int64_t m = 0; m < batch; ++m) {
    const int64_t aOff = m * n * n, bOff = m * n * k;
    for (int64_t j = 0; j < k; ++j) {
      // Row by row from the end the triangle starts at: each unknown once
      // the ones it depends on are known.
      for (int64_t step = 0; step < n; ++step) {
        const int64_t i = upper ? n - 1 - step : step;
        double acc = b.getDouble(bOff + i * k + j);
        for (int64_t p = upper ? i + 1 : 0; p < (upper ? n : i); ++p)
          acc -= a.getDouble(aOff + i * n + p) * column[static_cast<size_t>(p)];
        column[static_cast<size_t>(i)] = unit ? acc : acc / a.getDouble(aOff + i * n + i);
      }
      for (int64_t i = 0; i < n; ++i) x.setDouble(bOff + i * k + j, column[static_cast<size_t>(i)]);
    }
  }
  return x;
}

std::optional<int64_t> firstNonFiniteMatrix(const Tensor& a, char uplo) {
  const int64_t n = a.shape().back();
  const int64_t batch = n == 0 ? 0 : a.numel() / (n * n);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = uplo == 'L' ? 0 : i; j < (uplo == 'L' ? i + 1 : n); ++j)
        if (!std::isfinite(a.getDouble((b * n + i) * n + j))) return b;
  return std::nullopt;
}

ir::Error nonFiniteEighInput(int64_t batchIndex) {
  return ir::Error(
      fmt::format("eigh: matrix {} of the batch has a NaN or Inf entry (eigh needs finite input)", batchIndex));
}

std::vector<Tensor> eigh(const ir::Node& node, const Tensor& a) {
  const int64_t n = a.shape().back();
  const ir::Attribute* uploAttr = node.attrs.find("uplo");
  const char uplo = uploAttr && uploAttr->s == "U" ? 'U' : 'L';
  if (std::optional<int64_t> bad = firstNonFiniteMatrix(a, uplo)) throw nonFiniteEighInput(*bad);
  std::vector<int64_t> valueShape(a.shape().begin(), a.shape().end() - 1);
  Tensor values(a.dtype(), valueShape), vectors(a.dtype(), a.shape());
  const int64_t batch = n == 0 ? 0 : a.numel() / (n * n);
  std::vector<double> matrix(static_cast<size_t>(n * n)), w(static_cast<size_t>(n));
  for (int64_t b = 0; b < batch; ++b) {
    // The oracle works in f64 whatever the input dtype (dsyevd), then rounds.
    for (int64_t i = 0; i < n * n; ++i) matrix[static_cast<size_t>(i)] = a.getDouble(b * n * n + i);
    lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', uplo, static_cast<lapack_int>(n), matrix.data(),
                                     static_cast<lapack_int>(n), w.data());
    if (info != 0)
      throw ir::Error(fmt::format("eigh: LAPACK dsyevd failed for matrix {} of the batch (info = {})", b, info));
    for (int64_t i = 0; i < n; ++i) values.setDouble(b * n + i, w[static_cast<size_t>(i)]);
    for (int64_t i = 0; i < n * n; ++i) vectors.setDouble(b * n * n + i, matrix[static_cast<size_t>(i)]);
  }
  return {values, vectors};
}

}  // namespace graphc::runtime::reference
