#include "ir/Mx.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

#include "ir/Half.h"

namespace graphc::ir {

namespace {

constexpr MxFormatInfo kFormats[] = {
    {"mxfp8_e4m3", 8, 4, 3, 7, 8, 448.0},
    {"mxfp8_e5m2", 8, 5, 2, 15, 15, 57344.0},
    {"mxfp6_e3m2", 6, 3, 2, 3, 4, 28.0},
    {"mxfp6_e2m3", 6, 2, 3, 1, 2, 7.5},
    {"mxfp4_e2m1", 4, 2, 1, 1, 2, 6.0},
    {"f16", 16, 5, 10, 15, 15, 65504.0},
    {"bf16", 16, 8, 7, 127, 127, 3.3895313892515355e38},
};
constexpr int kMxFormats = 5;  // those with a block scale, decoded by table

/// Every element's value, by format and code (what dequantisation reads).
struct DecodeTables {
  std::array<std::array<float, 256>, kMxFormats> value{};
  DecodeTables() {
    for (int f = 0; f < kMxFormats; ++f) {
      const MxFormatInfo& info = kFormats[f];
      for (int code = 0; code < (1 << info.bits); ++code) {
        const int sign = code >> (info.bits - 1);
        const int exponent = (code >> info.mantissaBits) & ((1 << info.exponentBits) - 1);
        const int mantissa = code & ((1 << info.mantissaBits) - 1);
        double magnitude =
            exponent == 0 ? std::ldexp(mantissa, 1 - info.bias - info.mantissaBits)
                          : std::ldexp((1 << info.mantissaBits) + mantissa, exponent - info.bias - info.mantissaBits);
        // E4M3's S.1111.111 is NaN, E5M2's top exponent Inf/NaN: never
        // produced by mxEncodeElement, but a damaged file may hold them.
        if (f == 0 && exponent == 15 && mantissa == 7) magnitude = std::numeric_limits<double>::quiet_NaN();
        if (f == 1 && exponent == 31)
          magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
        value[f][code] = static_cast<float>(sign ? -magnitude : magnitude);
      }
    }
  }
};

const DecodeTables& tables() {
  static const DecodeTables t;
  return t;
}

}  // namespace

const MxFormatInfo& mxFormatInfo(MxFormat f) { return kFormats[static_cast<int>(f)]; }

std::optional<MxFormat> parseMxFormat(std::string_view name) {
  if (name == "mxfp8") return MxFormat::E4M3;
  if (name == "mxfp6") return MxFormat::E2M3;
  if (name == "mxfp4") return MxFormat::E2M1;
  for (int f = 0; f < static_cast<int>(std::size(kFormats)); ++f)
    if (kFormats[f].name == name) return static_cast<MxFormat>(f);
  return std::nullopt;
}

uint8_t mxEncodeElement(MxFormat f, double x) {
  const MxFormatInfo& info = mxFormatInfo(f);
  const int sign = std::signbit(x) ? 1 : 0;
  const double a = std::fabs(x);
  const int maxCode = (1 << (info.bits - 1)) - 1 - (f == MxFormat::E4M3 ? 1 : 0);  // E4M3: below the NaN
  int magnitude = 0;
  if (a >= info.maxNormal) {
    magnitude = f == MxFormat::E5M2 ? (30 << 2) | 3 : maxCode;  // E5M2: below Inf
  } else if (a > 0) {
    // The quantum of a's binade (the subnormals' below the smallest normal);
    // a / quantum is exact in double, nearbyint rounds it ties to even.
    int exponent = std::ilogb(a);
    if (exponent < 1 - info.bias) exponent = 1 - info.bias;
    const double q = std::nearbyint(std::ldexp(a, info.mantissaBits - exponent));  // ≤ 2^(m+1)
    const double value = std::ldexp(q, exponent - info.mantissaBits);
    if (value >= info.maxNormal) {
      magnitude = f == MxFormat::E5M2 ? (30 << 2) | 3 : maxCode;
    } else if (value == 0) {
      magnitude = 0;
    } else {
      int e = std::ilogb(value);
      if (e < 1 - info.bias) {
        magnitude = static_cast<int>(q);  // subnormal: exponent field 0
      } else {
        const int significand = static_cast<int>(std::ldexp(value, info.mantissaBits - e));
        magnitude = ((e + info.bias) << info.mantissaBits) | (significand - (1 << info.mantissaBits));
      }
    }
  }
  return static_cast<uint8_t>((sign << (info.bits - 1)) | magnitude);
}

float mxDecodeElement(MxFormat f, uint8_t code) { return tables().value[static_cast<int>(f)][code]; }

const float* mxDecodeTable(MxFormat f) { return tables().value[static_cast<int>(f)].data(); }

uint8_t mxSharedScale(MxFormat f, const float* block, int64_t n) {
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(block[i])) return 0xFF;
    amax = std::max(amax, std::fabs(block[i]));
  }
  if (amax == 0) return 0;
  int shared = std::ilogb(amax) - mxFormatInfo(f).emax;  // floor(log2(amax)), subnormals included
  shared = std::clamp(shared, -127, 127);
  return static_cast<uint8_t>(shared + 127);
}

float mxScaleValue(uint8_t scale) {
  return scale == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, scale - 127);
}

int64_t mxRowBytes(MxFormat f, int64_t cols) { return (cols * mxFormatInfo(f).bits + 7) / 8; }

void mxQuantize(MxFormat f, const float* values, int64_t rows, int64_t cols, uint8_t* elements, uint8_t* scales) {
  if (!mxHasScales(f)) {  // f16, bf16: each value rounded, little-endian
    for (int64_t i = 0; i < rows * cols; ++i) {
      const uint16_t h = f == MxFormat::F16 ? floatToF16(values[i]) : floatToBf16(values[i]);
      elements[2 * i] = static_cast<uint8_t>(h & 0xff);
      elements[2 * i + 1] = static_cast<uint8_t>(h >> 8);
    }
    return;
  }
  const int bits = mxFormatInfo(f).bits;
  const int64_t rowBytes = mxRowBytes(f, cols), blocks = mxRowBlocks(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = values + r * cols;
    uint8_t* out = elements + r * rowBytes;
    std::fill(out, out + rowBytes, 0);
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * kMxBlock, n = std::min<int64_t>(kMxBlock, cols - begin);
      const uint8_t scale = mxSharedScale(f, row + begin, n);
      scales[r * blocks + b] = scale;
      if (scale == 0xFF) continue;  // a NaN block: elements stay 0
      for (int64_t i = begin; i < begin + n; ++i) {
        const uint32_t code = mxEncodeElement(f, std::ldexp(static_cast<double>(row[i]), 127 - scale));
        const int64_t bit = i * bits;
        out[bit / 8] |= static_cast<uint8_t>(code << (bit % 8));
        if (bit % 8 + bits > 8) out[bit / 8 + 1] |= static_cast<uint8_t>(code >> (8 - bit % 8));
      }
    }
  }
}

void mxDequantize(MxFormat f, const uint8_t* elements, const uint8_t* scales, int64_t cols, int64_t rowBegin,
                  int64_t rowEnd, float* out) {
  if (!mxHasScales(f)) {
    for (int64_t i = rowBegin * cols; i < rowEnd * cols; ++i)
      out[i - rowBegin * cols] = mxWideValue(f, elements + 2 * i);
    return;
  }
  const int bits = mxFormatInfo(f).bits;
  const int64_t rowBytes = mxRowBytes(f, cols), blocks = mxRowBlocks(cols);
  const std::array<float, 256>& table = tables().value[static_cast<int>(f)];
  for (int64_t r = rowBegin; r < rowEnd; ++r) {
    const uint8_t* in = elements + r * rowBytes;
    float* row = out + (r - rowBegin) * cols;
    for (int64_t i = 0; i < cols; ++i)
      row[i] = table[mxCode(in, bits, i)] * mxScaleValue(scales[r * blocks + i / kMxBlock]);
  }
}

}  // namespace graphc::ir
