#include "runtime/Npy.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "ir/Diagnostics.h"

namespace graphc::runtime {

static_assert(std::endian::native == std::endian::little, "graphc's .npy I/O assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";

std::string descrOf(DType t) {
  switch (t) {
    case DType::F16: return "<f2";
    case DType::BF16: return "|V2";
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::I8: return "|i1";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    case DType::Bool: return "|b1";
  }
  return "";
}

std::optional<DType> dtypeOfDescr(const std::string& d) {
  static const std::pair<const char*, DType> table[] = {
      {"<f2", DType::F16}, {"|V2", DType::BF16}, {"<V2", DType::BF16}, {"<f4", DType::F32}, {"<f8", DType::F64},
      {"|i1", DType::I8},  {"<i1", DType::I8},   {"<i4", DType::I32},  {"<i8", DType::I64}, {"|b1", DType::Bool},
  };
  for (const auto& [name, t] : table)
    if (d == name) return t;
  return std::nullopt;
}

}  // namespace

Tensor parseNpy(const std::string& bytes, const std::string& name) {
  auto fail = [&](const std::string& why) { return ir::Error(fmt::format("{}: {}", name, why)); };
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) throw fail("not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail("truncated header");
    headerLen = 0;
    for (int k = 0; k < 4; ++k) headerLen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
    headerStart = 12;
  } else {
    throw fail(fmt::format("unsupported .npy format version {}", major));
  }
  if (headerStart + headerLen > bytes.size()) throw fail("truncated header");
  const std::string header = bytes.substr(headerStart, headerLen);

  std::smatch m;
  static const std::regex descrRe(R"('descr'\s*:\s*'([^']*)')");
  static const std::regex orderRe(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shapeRe(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, m, descrRe)) throw fail("header has no 'descr'");
  std::string descr = m[1];
  auto dtype = dtypeOfDescr(descr);
  if (!dtype) throw fail(fmt::format("unsupported dtype '{}' (graphc reads <f2 |V2 <f4 <f8 |i1 <i4 <i8 |b1)", descr));
  if (!std::regex_search(header, m, orderRe)) throw fail("header has no 'fortran_order'");
  if (m[1] == "True") throw fail("Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  if (!std::regex_search(header, m, shapeRe)) throw fail("header has no 'shape'");
  std::vector<int64_t> shape;
  std::stringstream dims(m[1]);
  std::string item;
  while (std::getline(dims, item, ',')) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    try {
      size_t used = 0;
      long long v = std::stoll(item, &used);
      if (v < 0) throw std::out_of_range("negative");
      shape.push_back(v);
    } catch (const std::exception&) {
      throw fail(fmt::format("bad shape entry '{}'", item));
    }
  }
  Tensor t(*dtype, shape);
  const size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart != t.nbytes())
    throw fail(fmt::format("data holds {} bytes but shape ({}) of {} needs {}", bytes.size() - dataStart,
                           fmt::join(shape, ", "), descr, t.nbytes()));
  std::memcpy(t.data(), bytes.data() + dataStart, t.nbytes());
  return t;
}

Tensor readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ir::Error(fmt::format("{}: cannot open file", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parseNpy(bytes.str(), path);
}

std::string serializeNpy(const Tensor& t) {
  std::string shape;
  for (int64_t d : t.shape()) shape += fmt::format("{}, ", d);
  if (t.rank() > 1) shape.resize(shape.size() - 1 - 1);  // "2, 3" rather than "2, 3, "
  else if (t.rank() == 1) shape.pop_back();              // "4," as Python writes a 1-tuple
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descrOf(t.dtype()), shape);
  // Pad with spaces so the data starts on a 64-byte boundary, then a newline.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data()), t.nbytes());
  return out;
}

void writeNpy(const std::string& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  const std::string bytes = serializeNpy(t);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw ir::Error(fmt::format("{}: cannot write file", path));
}

}  // namespace graphc::runtime
