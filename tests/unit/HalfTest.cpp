// f16/bf16 conversions: exact values, rounding to nearest even, overflow,
// subnormals, and float→half→float identity on every half pattern.
#include <cmath>

#include <gtest/gtest.h>

#include "ir/Half.h"

namespace graphc::ir {
namespace {

TEST(Half, KnownValues) {
  EXPECT_EQ(floatToF16(1.0f), 0x3c00);
  EXPECT_EQ(floatToF16(-2.0f), 0xc000);
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00);  // rounds up past the largest half: infinity
  EXPECT_EQ(floatToF16(65519.0f), 0x7bff);
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -25)), 0x0000);         // halfway to zero: ties to even
  EXPECT_EQ(floatToF16(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 ulp: ties to even (2)
  EXPECT_EQ(floatToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie, even stays
  EXPECT_EQ(floatToF16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie, odd rounds up
  EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(NAN))));
  EXPECT_EQ(f16ToFloat(0x7c00), INFINITY);
}

TEST(Half, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(floatToF16(f), h) << std::hex << h;
  }
}

TEST(BFloat16, RoundingAndPatterns) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie to even
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = bf16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(floatToBf16(f), h);
  }
}

}  // namespace
}  // namespace graphc::ir
