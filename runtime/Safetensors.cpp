#include "runtime/Safetensors.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/Diagnostics.h"
#include "ir/SizeMath.h"

namespace graphc::runtime {

namespace {

using nlohmann::json;

constexpr int64_t kMaxHeaderBytes = 100'000'000;  // the format's own limit
constexpr size_t kDataAlignment = 64;

[[noreturn]] void fail(const std::string& what) { throw ir::Error("safetensors: " + what); }

uint64_t readLittleEndian64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  for (const SafetensorsTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

int64_t safetensorsElementSize(std::string_view dtype) {
  static const std::map<std::string_view, int64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},   {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}, {"I16", 2}, {"U16", 2},
      {"F16", 2},  {"BF16", 2}, {"I32", 4}, {"U32", 4},     {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

SafetensorsFile parseSafetensors(std::span<const std::byte> file) {
  if (file.size() < 8) fail(fmt::format("{} bytes is shorter than the 8-byte header length", file.size()));
  const uint64_t headerBytes = readLittleEndian64(file.data());
  if (headerBytes > static_cast<uint64_t>(kMaxHeaderBytes) || headerBytes > file.size() - 8)
    fail(fmt::format("a header of {} bytes does not fit the {}-byte file", headerBytes, file.size()));
  const auto* headerStart = reinterpret_cast<const char*>(file.data() + 8);
  json header = json::parse(headerStart, headerStart + headerBytes, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) fail("the header is not valid JSON");
  if (!header.is_object()) fail("the header is not a JSON object");
  const std::span<const std::byte> data = file.subspan(8 + headerBytes);

  SafetensorsFile out;
  for (auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("__metadata__ is not an object");
      for (auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail(fmt::format("metadata '{}' is not a string", key));
        out.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) fail(fmt::format("tensor '{}': not an object", name));
    const json* dtype = entry.contains("dtype") ? &entry["dtype"] : nullptr;
    const json* shape = entry.contains("shape") ? &entry["shape"] : nullptr;
    const json* offsets = entry.contains("data_offsets") ? &entry["data_offsets"] : nullptr;
    if (!dtype || !dtype->is_string() || !shape || !shape->is_array() || !offsets || !offsets->is_array() ||
        offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
      fail(fmt::format("tensor '{}': needs a string dtype, a shape array and two data_offsets", name));
    SafetensorsTensor t;
    t.name = name;
    t.dtype = dtype->get<std::string>();
    const int64_t elementSize = safetensorsElementSize(t.dtype);
    if (elementSize == 0) fail(fmt::format("tensor '{}': unknown dtype '{}'", name, t.dtype));
    int64_t numel = 1;
    for (const json& d : *shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        fail(fmt::format("tensor '{}': a dim is not a non-negative integer", name));
      t.shape.push_back(d.get<int64_t>());
      numel = ir::checkedMul(numel, t.shape.back(), "a safetensors tensor's element count");
    }
    const uint64_t begin = (*offsets)[0].get<uint64_t>(), end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data.size())
      fail(fmt::format("tensor '{}': bytes [{}, {}) are outside the {} bytes of data", name, begin, end, data.size()));
    const int64_t nbytes = ir::checkedMul(numel, elementSize, "a safetensors tensor's byte count");
    if (static_cast<uint64_t>(nbytes) != end - begin)
      fail(fmt::format("tensor '{}': {} bytes for {} elements of {}", name, end - begin, numel, t.dtype));
    t.bytes = data.subspan(begin, end - begin);
    out.tensors.push_back(std::move(t));
  }
  // The format's rule: the tensors' byte ranges tile the data without
  // overlaps (a file that aliases two tensors is refused).
  std::sort(out.tensors.begin(), out.tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) { return a.bytes.data() < b.bytes.data(); });
  const std::byte* at = data.data();
  for (const SafetensorsTensor& t : out.tensors) {
    if (t.bytes.data() != at) fail(fmt::format("tensor '{}': its bytes overlap another's or leave a hole", t.name));
    at += t.bytes.size();
  }
  if (at != data.data() + data.size()) fail("bytes after the last tensor");
  return out;
}

std::string writeSafetensors(const std::vector<SafetensorsTensor>& tensors,
                             const std::map<std::string, std::string>& metadata) {
  // The format allows no holes between tensors, so alignment comes from
  // the order: the data starts on a 64-byte boundary and tensors of wider
  // elements come first, so each starts at a multiple of its element size.
  std::vector<const SafetensorsTensor*> order;
  for (const SafetensorsTensor& t : tensors) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const SafetensorsTensor* a, const SafetensorsTensor* b) {
    return safetensorsElementSize(a->dtype) > safetensorsElementSize(b->dtype);
  });
  json header = json::object();
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const SafetensorsTensor* tensor : order) {
    const SafetensorsTensor& t = *tensor;
    if (t.name == "__metadata__" || !names.insert(t.name).second)
      fail(fmt::format("tensor name '{}' is reserved or repeated", t.name));
    const int64_t elementSize = safetensorsElementSize(t.dtype);
    if (elementSize == 0) fail(fmt::format("tensor '{}': unknown dtype '{}'", t.name, t.dtype));
    int64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0) fail(fmt::format("tensor '{}': a negative dim", t.name));
      numel = ir::checkedMul(numel, d, "a safetensors tensor's element count");
    }
    if (static_cast<uint64_t>(numel) * static_cast<uint64_t>(elementSize) != t.bytes.size())
      fail(fmt::format("tensor '{}': {} bytes for {} elements of {}", t.name, t.bytes.size(), numel, t.dtype));
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((kDataAlignment - (8 + text.size()) % kDataAlignment) % kDataAlignment, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  out += text;
  out.reserve(out.size() + offset);
  for (const SafetensorsTensor* t : order) out.append(reinterpret_cast<const char*>(t->bytes.data()), t->bytes.size());
  return out;
}

}  // namespace graphc::runtime
