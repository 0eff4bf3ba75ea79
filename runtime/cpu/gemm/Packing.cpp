#include "runtime/cpu/gemm/Packing.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

namespace graphc::runtime::cpu::gemm {

int64_t packedFloats(int64_t count, int64_t k, int panel) { return (count + panel - 1) / panel * panel * k; }

void packA(MatrixView a, int64_t row0, int64_t rows, int64_t k, int mr, float* out) {
  for (int64_t g = 0; g < rows; g += mr, out += mr * k) {
    const int64_t n = std::min<int64_t>(mr, rows - g);
    const float* src = a.data + (row0 + g) * a.rowStride;
    for (int64_t p = 0; p < k; ++p) {
      float* dst = out + p * mr;
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i * a.rowStride + p * a.colStride];
      for (int64_t i = n; i < mr; ++i) dst[i] = 0.0f;
    }
  }
}

void packB(MatrixView b, int64_t col0, int64_t cols, int64_t k, int nr, float* out) {
  for (int64_t j = 0; j < cols; j += nr, out += nr * k) {
    const int64_t n = std::min<int64_t>(nr, cols - j);
    const float* src = b.data + (col0 + j) * b.colStride;
    if (b.colStride == 1) {  // rows of B are contiguous: a copy per row
      for (int64_t p = 0; p < k; ++p) {
        std::memcpy(out + p * nr, src + p * b.rowStride, static_cast<size_t>(n) * sizeof(float));
        std::fill(out + p * nr + n, out + (p + 1) * nr, 0.0f);
      }
      continue;
    }
    // A transposed B (a linear's weight [n, k]): column by column, each a
    // contiguous read.
    for (int64_t p = 0; p < k; ++p) std::fill(out + p * nr + n, out + (p + 1) * nr, 0.0f);
    for (int64_t c = 0; c < n; ++c) {
      const float* column = src + c * b.colStride;
      for (int64_t p = 0; p < k; ++p) out[p * nr + c] = column[p * b.rowStride];
    }
  }
}

int64_t ConvGeometry::k() const {
  int64_t n = channels;
  for (int64_t s : kernel) n *= s;
  return n;
}

int64_t ConvGeometry::positions() const {
  int64_t n = 1;
  for (int64_t s : out) n *= s;
  return n;
}

int64_t ConvGeometry::imageFloats() const {
  int64_t n = channels;
  for (int64_t s : in) n *= s;
  return n;
}

std::vector<int64_t> ConvGeometry::padded() const {
  std::vector<int64_t> p(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t reach = (out[d] - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1;  // from the padded start
    p[d] = std::max(padBegin[d] + in[d], reach);
  }
  return p;
}

bool ConvGeometry::needsPadding() const { return padded() != in; }

int64_t ConvGeometry::paddedFloats() const {
  int64_t n = channels;
  for (int64_t s : padded()) n *= s;
  return n;
}

void padImage(const float* image, const ConvGeometry& g, float* out) {
  const std::vector<int64_t> p = g.padded();
  const size_t rank = p.size();
  std::fill(out, out + g.paddedFloats(), 0.0f);
  // Copy each innermost row of the input to its place in the padded image.
  int64_t rows = g.channels, rowLength = g.in[rank - 1];
  for (size_t d = 0; d + 1 < rank; ++d) rows *= g.in[d];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = 0, rest = r, scale = 1;
    for (size_t d = rank - 1; d-- > 0;) {  // the outer spatial coordinates of row r
      at += (rest % g.in[d] + g.padBegin[d]) * scale * p[rank - 1];
      scale *= p[d];
      rest /= g.in[d];
    }
    at += rest * scale * p[rank - 1] + g.padBegin[rank - 1];  // rest is the channel
    std::copy(image + r * rowLength, image + (r + 1) * rowLength, out + at);
  }
}

namespace {

constexpr size_t kMaxSpatial = 3;
constexpr int kMaxPanel = 64;  // columns per B panel packConvB handles (every kernel's nr is at most 32)

/// The spatial coordinates of output position `at` (row-major over `out`).
std::array<int64_t, kMaxSpatial> coordinates(int64_t at, const std::vector<int64_t>& out) {
  std::array<int64_t, kMaxSpatial> c{};
  for (size_t d = out.size(); d-- > 0;) {
    c[d] = at % out[d];
    at /= out[d];
  }
  return c;
}

}  // namespace

void packConvB(const float* image, const ConvGeometry& g, int64_t col0, int64_t cols, int nr, float* out) {
  const size_t rank = g.out.size();
  if (rank > kMaxSpatial || nr > kMaxPanel) throw std::logic_error("packConvB: more spatial dims or columns than it holds");
  const std::vector<int64_t> p = g.padded();
  std::array<int64_t, kMaxSpatial> pstride{};  // the padded image's strides per spatial dim
  int64_t plane = 1;
  for (size_t d = rank; d-- > 0;) {
    pstride[d] = plane;
    plane *= p[d];
  }
  // Each kernel point's offset from a window's origin.
  int64_t kernelPoints = 1;
  for (int64_t s : g.kernel) kernelPoints *= s;
  std::vector<int64_t> kernelOffset(static_cast<size_t>(kernelPoints));
  for (int64_t kp = 0; kp < kernelPoints; ++kp) {
    const std::array<int64_t, kMaxSpatial> kc = coordinates(kp, g.kernel);
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += kc[d] * g.dilation[d] * pstride[d];
    kernelOffset[static_cast<size_t>(kp)] = off;
  }
  const int64_t k = g.k();
  for (int64_t j0 = 0; j0 < cols; j0 += nr, out += nr * k) {
    const int64_t n = std::min<int64_t>(nr, cols - j0);
    // Each column's window origin in the padded image, and the runs of
    // columns whose origins are consecutive.
    std::array<int64_t, kMaxPanel> origin{};
    std::array<int64_t, kMaxPanel + 1> runStart{};
    int runs = 0;
    for (int64_t j = 0; j < n; ++j) {
      const std::array<int64_t, kMaxSpatial> o = coordinates(col0 + j0 + j, g.out);
      int64_t at = 0;
      for (size_t d = 0; d < rank; ++d) at += o[d] * g.stride[d] * pstride[d];
      origin[static_cast<size_t>(j)] = at;
      if (j == 0 || at != origin[static_cast<size_t>(j - 1)] + 1) runStart[static_cast<size_t>(runs++)] = j;
    }
    runStart[static_cast<size_t>(runs)] = n;
    const bool contiguous = runs * 4 <= n;  // runs of 4 columns or more on average: copy them
    float* row = out;
    for (int64_t c = 0; c < g.channels; ++c) {
      const float* channel = image + c * plane;
      for (int64_t kp = 0; kp < kernelPoints; ++kp, row += nr) {
        const float* at = channel + kernelOffset[static_cast<size_t>(kp)];
        if (contiguous) {
          for (int r = 0; r < runs; ++r) {
            const int64_t from = runStart[static_cast<size_t>(r)], to = runStart[static_cast<size_t>(r + 1)];
            const float* src = at + origin[static_cast<size_t>(from)];
            for (int64_t j = from; j < to; ++j) row[j] = src[j - from];
          }
        } else {
          for (int64_t j = 0; j < n; ++j) row[j] = at[origin[static_cast<size_t>(j)]];
        }
        for (int64_t j = n; j < nr; ++j) row[j] = 0.0f;
      }
    }
  }
}

}  // namespace graphc::runtime::cpu::gemm
