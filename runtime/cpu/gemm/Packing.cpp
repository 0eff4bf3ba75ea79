#include "runtime/cpu/gemm/Packing.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

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

namespace {

/// The coordinates of position `at` in a row-major space of `sizes`.
std::vector<int64_t> coordinates(int64_t at, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> c(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    c[d] = at % sizes[d];
    at /= sizes[d];
  }
  return c;
}

}  // namespace

ConvGeometry::ConvGeometry(bool depthwise, int64_t groups, int64_t channels, std::vector<int64_t> in,
                           std::vector<int64_t> out, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                           std::vector<int64_t> dilation, std::vector<int64_t> padBegin, PoolWindow pool)
    : depthwise_(depthwise),
      groups_(depthwise ? 1 : groups),
      channels_(channels),
      pool_(std::move(pool)),
      in_(std::move(in)),
      out_(std::move(out)),
      kernel_(std::move(kernel)),
      stride_(std::move(stride)),
      dilation_(std::move(dilation)),
      padBegin_(std::move(padBegin)) {
  const size_t rank = in_.size();
  padded_.resize(rank);
  paddedStride_.resize(rank);
  imageFloats_ = paddedFloats_ = channels_;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t reach = (out_[d] - 1) * stride_[d] + (kernel_[d] - 1) * dilation_[d] + 1;  // from the padded start
    padded_[d] = std::max(padBegin_[d] + in_[d], reach);
    positions_ *= out_[d];
    imageFloats_ *= in_[d];
    paddedFloats_ *= padded_[d];
  }
  int64_t plane = 1;
  for (size_t d = rank; d-- > 0;) {
    paddedStride_[d] = plane;
    plane *= padded_[d];
  }
  int64_t kernelPoints = 1;
  for (int64_t s : kernel_) kernelPoints *= s;
  const int64_t summed = depthwise_ ? 1 : channels_ / groups_;  // channels a window sums over
  offsets_.reserve(static_cast<size_t>(summed * kernelPoints));
  for (int64_t c = 0; c < summed; ++c)
    for (int64_t kp = 0; kp < kernelPoints; ++kp) {
      const std::vector<int64_t> kc = coordinates(kp, kernel_);
      int64_t off = c * plane;
      for (size_t d = 0; d < rank; ++d) off += kc[d] * dilation_[d] * paddedStride_[d];
      offsets_.push_back(off);
    }
  origins_.resize(static_cast<size_t>(positions_));
  for (int64_t q = 0; q < positions_; ++q) origins_[static_cast<size_t>(q)] = origin(q);
  if (pool_.kind == PoolWindow::Kind::Average) {
    // Window point p of output o lies at o·stride + p·dilation in the padded
    // input; it counts when within [low, high).
    for (size_t d = 0; d < rank; ++d) {
      const int64_t low = pool_.countIncludePad ? 0 : padBegin_[d];
      const int64_t high = in_[d] + padBegin_[d] + (pool_.countIncludePad ? pool_.padEnd[d] : 0);
      std::vector<int64_t>& counts = counts_.emplace_back();
      for (int64_t o = 0; o < out_[d]; ++o) {
        int64_t n = 0;
        for (int64_t p = 0; p < kernel_[d]; ++p) {
          const int64_t at = o * stride_[d] + p * dilation_[d];
          n += at >= low && at < high;
        }
        counts.push_back(n);
      }
    }
  }
}

bool ConvGeometry::pointwise() const {
  auto ones = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  return !depthwise_ && groups_ == 1 && ones(kernel_) && ones(stride_) && !needsPadding() && out_ == in_;
}

DepthwisePlane ConvGeometry::plane(int vectorWidth) const {
  DepthwisePlane g;
  g.kh = kernel_[0];
  g.kw = kernel_[1];
  g.sy = stride_[0];
  g.sx = stride_[1];
  g.dy = dilation_[0];
  g.dx = dilation_[1];
  g.oh = out_[0];
  g.ow = out_[1];
  g.rowLength = (g.ow + vectorWidth - 1) / vectorWidth * vectorWidth + (g.kw - 1) * g.dx / g.sx;
  g.phaseFloats = padded_[0] * g.rowLength;
  for (int64_t kx = 0; kx < g.kw; ++kx) g.tapColumns.push_back(kx * g.dx % g.sx * g.phaseFloats + kx * g.dx / g.sx);
  return g;
}

void ConvGeometry::padPlanePhases(const float* input, const DepthwisePlane& g, float* phases, float border) const {
  const int64_t height = in_[0], width = in_[1], top = padBegin_[0], left = padBegin_[1];
  for (int64_t p = 0; p < g.sx; ++p)
    for (int64_t r = 0; r < padded_[0]; ++r) {
      float* row = phases + p * g.phaseFloats + r * g.rowLength;
      const int64_t y = r - top;
      if (y < 0 || y >= height) {
        std::fill(row, row + g.rowLength, border);
        continue;
      }
      // Phase p's column j is the padded column j·sx + p: input column
      // j·sx + p − left where that lies in the row (j in [first, last)),
      // else the border.
      const int64_t first = std::min(g.rowLength, std::max<int64_t>(0, (left - p + g.sx - 1) / g.sx));
      const int64_t last = std::clamp<int64_t>((width + left - p + g.sx - 1) / g.sx, first, g.rowLength);
      const float* from = input + y * width + p - left;
      std::fill(row, row + first, border);
      if (g.sx == 1)
        std::copy(from + first, from + last, row + first);
      else
        for (int64_t j = first; j < last; ++j) row[j] = from[j * g.sx];
      std::fill(row + last, row + g.rowLength, border);
    }
}

int64_t ConvGeometry::origin(int64_t position) const {
  int64_t at = 0;
  for (size_t d = out_.size(); d-- > 0;) {
    at += position % out_[d] * stride_[d] * paddedStride_[d];
    position /= out_[d];
  }
  return at;
}

int64_t ConvGeometry::paddedRowStart(int64_t row) const {
  const size_t rank = padded_.size();
  int64_t at = padBegin_[rank - 1];
  for (size_t d = rank - 1; d-- > 0;) {  // the outer spatial coordinates of the row
    at += (row % in_[d] + padBegin_[d]) * paddedStride_[d];
    row /= in_[d];
  }
  return at;
}

void ConvGeometry::padImage(const float* image, float* out) const {
  std::fill(out, out + paddedFloats_, 0.0f);
  // Copy each innermost row of each channel to its place in the padded image.
  const int64_t plane = imageFloats_ / channels_, rowLength = in_.back(),
                rows = plane / std::max<int64_t>(rowLength, 1);
  for (int64_t c = 0; c < channels_; ++c)
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = image + c * plane + r * rowLength;
      std::copy(src, src + rowLength, out + c * paddedPlane() + paddedRowStart(r));
    }
}

ConvTransposeGeometry::ConvTransposeGeometry(int64_t channels, int64_t outChannels, std::vector<int64_t> in,
                                             std::vector<int64_t> out, std::vector<int64_t> kernel,
                                             std::vector<int64_t> stride, std::vector<int64_t> dilation,
                                             std::vector<int64_t> padBegin)
    : channels_(channels), outChannels_(outChannels) {
  if (in.size() > kRank) throw std::logic_error("ConvTransposeGeometry: more spatial dims than it handles");
  const size_t shift = kRank - in.size();
  for (size_t d = 0; d < kRank; ++d) {
    const bool given = d >= shift;
    in_[d] = given ? in[d - shift] : 1;
    out_[d] = given ? out[d - shift] : 1;
    kernel_[d] = given ? kernel[d - shift] : 1;
    stride_[d] = given ? stride[d - shift] : 1;
    dilation_[d] = given ? dilation[d - shift] : 1;
    padBegin_[d] = given ? padBegin[d - shift] : 0;
    kernelPoints_ *= kernel_[d];
    inPositions_ *= in_[d];
    outPositions_ *= out_[d];
  }
}

void ConvTransposeGeometry::col2im(const float* col, int64_t count, float* out) const {
  std::fill(out, out + count * outPositions_, 0.0f);
  for (int64_t c = 0; c < count; ++c) {
    float* plane = out + c * outPositions_;
    for (int64_t kz = 0; kz < kernel_[0]; ++kz)
      for (int64_t ky = 0; ky < kernel_[1]; ++ky)
        for (int64_t kx = 0; kx < kernel_[2]; ++kx, col += inPositions_) {
          for (int64_t iz = 0; iz < in_[0]; ++iz) {
            const int64_t oz = iz * stride_[0] + kz * dilation_[0] - padBegin_[0];
            if (oz < 0 || oz >= out_[0]) continue;
            for (int64_t iy = 0; iy < in_[1]; ++iy) {
              const int64_t oy = iy * stride_[1] + ky * dilation_[1] - padBegin_[1];
              if (oy < 0 || oy >= out_[1]) continue;
              const float* src = col + (iz * in_[1] + iy) * in_[2];
              float* dst = plane + (oz * out_[1] + oy) * out_[2];
              for (int64_t ix = 0; ix < in_[2]; ++ix) {
                const int64_t ox = ix * stride_[2] + kx * dilation_[2] - padBegin_[2];
                if (ox >= 0 && ox < out_[2]) dst[ox] += src[ix];
              }
            }
          }
        }
  }
}

void ConvGeometry::padImageChannelsLast(const float* image, float* out) const {
  std::fill(out, out + paddedFloats_, 0.0f);
  const int64_t plane = imageFloats_ / channels_, rowLength = in_.back(),
                rows = plane / std::max<int64_t>(rowLength, 1);
  for (int64_t r = 0; r < rows; ++r) {  // each innermost input row, to its padded place
    float* dst = out + paddedRowStart(r) * channels_;
    for (int64_t c = 0; c < channels_; ++c) {
      const float* src = image + c * plane + r * rowLength;
      for (int64_t x = 0; x < rowLength; ++x) dst[x * channels_ + c] = src[x];
    }
  }
}

}  // namespace graphc::runtime::cpu::gemm
