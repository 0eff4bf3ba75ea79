// graphc_mx_codec FORMAT COLS IN OUT_ELEMENTS OUT_SCALES OUT_VALUES: graphc's
// MX codec (ir/Mx.h) over a raw little-endian f32 file of rows × COLS
// values: writes the packed elements, the E8M0 scales and the dequantised
// f32 values, for mx_reference_test.py to check against the spec.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ir/Mx.h"

namespace {

bool write(const char* path, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: graphc_mx_codec FORMAT COLS IN OUT_ELEMENTS OUT_SCALES OUT_VALUES\n");
    return 2;
  }
  const auto format = graphc::ir::parseMxFormat(argv[1]);
  const int64_t cols = std::stoll(argv[2]);
  std::ifstream in(argv[3], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!format || cols <= 0 || bytes.size() % (4 * static_cast<size_t>(cols)) != 0) {
    std::fprintf(stderr, "graphc_mx_codec: bad format, column count or input size\n");
    return 2;
  }
  const int64_t rows = static_cast<int64_t>(bytes.size()) / 4 / cols;
  std::vector<float> values(static_cast<size_t>(rows * cols));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  std::vector<uint8_t> elements(static_cast<size_t>(rows * graphc::ir::mxRowBytes(*format, cols)));
  std::vector<uint8_t> scales(static_cast<size_t>(rows * graphc::ir::mxRowBlocks(cols)));
  graphc::ir::mxQuantize(*format, values.data(), rows, cols, elements.data(), scales.data());
  std::vector<float> back(values.size());
  graphc::ir::mxDequantize(*format, elements.data(), scales.data(), cols, 0, rows, back.data());
  return write(argv[4], elements.data(), elements.size()) && write(argv[5], scales.data(), scales.size()) &&
                 write(argv[6], back.data(), back.size() * 4)
             ? 0
             : 1;
}
