// f16 (IEEE binary16) and bf16 (bfloat16) conversions to and from float,
// rounding to nearest even; NaN stays NaN, overflow becomes infinity.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace graphc::ir {

inline uint16_t floatToBf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);  // keep it a quiet NaN
  uint32_t roundingBias = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

inline float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

inline uint16_t floatToF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absBits = x & 0x7fffffff;
  if (absBits >= 0x7f800000) return static_cast<uint16_t>(sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0));
  if (absBits >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds past 65504: infinity
  int exponent = static_cast<int>(absBits >> 23) - 127;
  if (exponent < -14) {
    // Subnormal half (or zero): shift the full significand into place, round to nearest even.
    if (exponent < -25) return static_cast<uint16_t>(sign);
    uint32_t mantissa = (absBits & 0x7fffff) | 0x800000;
    int shift = -exponent - 14 + 13;  // 14..24
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t mantissa = absBits & 0x7fffff;
  uint32_t h = (static_cast<uint32_t>(exponent + 15) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

inline float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace graphc::ir
