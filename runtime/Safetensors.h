// The safetensors format (huggingface/safetensors), the weights file of an
// exported package: an 8-byte little-endian header length N, N bytes of
// JSON — {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets":
// [begin, end]}, ..., "__metadata__": {"key": "text"}} — then the tensors'
// bytes, row-major little-endian, the offsets relative to the end of the
// header. The JSON is read and written with nlohmann-json; a reader checks
// everything a damaged or hostile file could get wrong (the header length,
// the JSON, each dtype, shape and byte range, ranges that overlap or leave
// holes) and throws ir::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace graphc::runtime {

/// One tensor of a safetensors file: its dtype spelled as the format spells
/// it ("F32", "BF16", "U8", "F8_E8M0", ...), its shape and its bytes.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;
};

struct SafetensorsFile {
  std::vector<SafetensorsTensor> tensors;  // in data order
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or null.
  const SafetensorsTensor* find(std::string_view name) const;
};

/// The bytes one element of a safetensors dtype takes; 0 for a name the
/// format does not have. Sub-byte types (F4, F6_*) are not element types
/// of a package: their blocks are stored packed as U8.
int64_t safetensorsElementSize(std::string_view dtype);

/// Parses `file` (which the tensors' spans point into). Throws ir::Error
/// naming what is wrong.
SafetensorsFile parseSafetensors(std::span<const std::byte> file);

/// The file holding `tensors` (names unique; each one's byte count its
/// shape's element count times its dtype's size — checked) and `metadata`.
/// The data starts at a multiple of 64 bytes from the file's start (the
/// header is padded with spaces, as the format allows) and tensors of wider
/// elements come first, so each tensor is aligned to its element size and a
/// loader can use the data in place.
std::string writeSafetensors(const std::vector<SafetensorsTensor>& tensors,
                             const std::map<std::string, std::string>& metadata = {});

}  // namespace graphc::runtime
