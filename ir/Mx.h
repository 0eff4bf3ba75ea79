// Microscaling (MX) formats, OCP Microscaling Formats (MX) Specification
// v1.0: a block of kMxBlock = 32 consecutive values (along a GEMM's
// reduction dim) shares one scale X, an E8M0 power of two (8 exponent bits,
// bias 127, 0xFF = NaN); each value is stored as an element P_i of a small
// float format, and stands for X · P_i. Bit layouts (sign first, then
// exponent, then mantissa; docs/export.md draws them):
//
//   format  element  bits  exp bias  max normal  min subnormal  Inf/NaN
//   mxfp8   E4M3     8     4   7     448         2^-9           NaN only (S.1111.111), not produced
//   mxfp8   E5M2     8     5   15    57344       2^-16          both, not produced
//   mxfp6   E3M2     6     3   3     28          2^-4           none
//   mxfp6   E2M3     6     2   1     7.5         2^-3           none
//   mxfp4   E2M1     4     2   1     6           2^-1           none
//
// Conversion (the spec's §6.3): shared_exp = floor(log2(max_i |V_i|)) −
// emax_elem, clamped to E8M0's range [−127, 127]; P_i = V_i / 2^shared_exp
// rounded to nearest, ties to even, and saturated to ±max normal (a block
// whose largest value's significand rounds up past the element's max
// normal saturates instead of overflowing). An all-zero block gets X =
// 2^-127. A block holding a NaN or an infinity gets X = NaN (0xFF) and all
// its elements 0: every value of the block reads back as NaN, as §5.3 says
// of a NaN scale — weights are finite, so this only flags damage.
//
// Packing: each row's elements are packed low bits first into a
// little-endian bit stream (mxfp4: element 2i in the low nibble of byte i;
// mxfp6: four elements in three bytes), each row starting on a byte.
// Dequantisation is exact in f32 (an element times a power of two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "ir/Half.h"

namespace graphc::ir {

constexpr int kMxBlock = 32;

/// The five MX element formats, then two plain 16-bit ones that share the
/// storage and the GEMMs' dequantise-on-use path but have no block scale
/// (a package's `--weights f16|bf16`): each value is the nearest f16 or
/// bf16, ties to even (ir/Half.h).
enum class MxFormat : uint8_t { E4M3, E5M2, E3M2, E2M3, E2M1, F16, BF16 };

/// Whether the format has an E8M0 scale per block (every MX format).
inline bool mxHasScales(MxFormat f) { return f < MxFormat::F16; }

struct MxFormatInfo {
  std::string_view name;  // "mxfp8_e4m3"
  int bits, exponentBits, mantissaBits, bias;
  int emax;          // the exponent of the largest normal
  double maxNormal;  // the largest finite magnitude
};

const MxFormatInfo& mxFormatInfo(MxFormat f);
/// "mxfp8" (E4M3), "mxfp6" (E2M3), "mxfp4" (E2M1), a full name
/// ("mxfp8_e5m2", "mxfp6_e3m2", ...), "f16" or "bf16"; nullopt for anything
/// else.
std::optional<MxFormat> parseMxFormat(std::string_view name);

/// The element nearest `x` (finite) ties to even, saturated to ±max normal.
uint8_t mxEncodeElement(MxFormat f, double x);
/// An element's value (its sign bit included: -0.0 for the negative zero).
float mxDecodeElement(MxFormat f, uint8_t code);
/// Every element's value by code (256 entries; codes past the format's
/// width unused), for decoding loops. Only the formats with scales.
const float* mxDecodeTable(MxFormat f);
/// The E8M0 scale of a block (see the conversion above).
uint8_t mxSharedScale(MxFormat f, const float* block, int64_t n);
/// 2^(scale − 127) as a float (NaN for 0xFF).
float mxScaleValue(uint8_t scale);

/// Element `i` of a packed row of `bits`-wide elements (the layout above).
inline uint8_t mxCode(const uint8_t* row, int bits, int64_t i) {
  const int64_t bit = i * bits;
  uint32_t word = row[bit / 8];
  if (bit % 8 + bits > 8) word |= static_cast<uint32_t>(row[bit / 8 + 1]) << 8;
  return static_cast<uint8_t>((word >> (bit % 8)) & ((1u << bits) - 1));
}
/// The value of an f16 or bf16 element stored little-endian at `at`.
inline float mxWideValue(MxFormat f, const uint8_t* at) {
  const auto h = static_cast<uint16_t>(at[0] | (at[1] << 8));
  return f == MxFormat::F16 ? f16ToFloat(h) : bf16ToFloat(h);
}

/// Bytes one packed row of `cols` elements takes.
int64_t mxRowBytes(MxFormat f, int64_t cols);
/// Blocks per row.
inline int64_t mxRowBlocks(int64_t cols) { return (cols + kMxBlock - 1) / kMxBlock; }

/// Quantises `rows` × `cols` row-major values: `elements` gets
/// rows · mxRowBytes bytes, `scales` rows · mxRowBlocks (nothing for f16
/// and bf16).
void mxQuantize(MxFormat f, const float* values, int64_t rows, int64_t cols, uint8_t* elements, uint8_t* scales);
/// Dequantises rows [rowBegin, rowEnd) into `out` (row-major, `cols` each).
void mxDequantize(MxFormat f, const uint8_t* elements, const uint8_t* scales, int64_t cols, int64_t rowBegin,
                  int64_t rowEnd, float* out);

/// A weight held in an MX format: a dense constant of dtype f32 and logical
/// shape [rows, ...] whose trailing dims (cols values per row) are blocked —
/// or, `transposed`, of logical shape [cols, rows], stored transposed so
/// that its blocks run along its first dim (a matmul's B [k, n], whose
/// reduction dim is k). `owner` keeps the bytes alive (an exported
/// package's storage).
struct MxWeights {
  MxFormat format = MxFormat::E4M3;
  int64_t rows = 0, cols = 0;  // as stored
  bool transposed = false;
  std::span<const std::byte> elements, scales;
  std::shared_ptr<const void> owner;

  /// Dequantises rows [begin, end) into `out`.
  void dequantize(int64_t begin, int64_t end, float* out) const {
    mxDequantize(format, reinterpret_cast<const uint8_t*>(elements.data()),
                 reinterpret_cast<const uint8_t*>(scales.data()), cols, begin, end, out);
  }
};

}  // namespace graphc::ir
