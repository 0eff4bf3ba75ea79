#include "runtime/Npy.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "ir/SizeMath.h"
#include "runtime/FileIO.h"

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

std::optional<DType> dtypeOfDescr(std::string_view d) {
  static const std::pair<const char*, DType> table[] = {
      {"<f2", DType::F16}, {"|V2", DType::BF16}, {"<V2", DType::BF16}, {"<f4", DType::F32}, {"<f8", DType::F64},
      {"|i1", DType::I8},  {"<i1", DType::I8},   {"<i4", DType::I32},  {"<i8", DType::I64}, {"|b1", DType::Bool},
  };
  for (const auto& [name, t] : table)
    if (d == name) return t;
  return std::nullopt;
}

/// The header dict of a .npy file, a Python literal such as
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, read by a
/// small scanner (no regular expressions: a header may be 64 KiB or more,
/// and std::regex recurses per character).
class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  struct Fields {
    std::string descr;
    bool fortranOrder = false;
    std::vector<int64_t> shape;
  };

  Fields read() {
    Fields f;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = string();
      expect(':');
      if (key == "descr") {
        if (!peek('\'') && !peek('"')) fail("'descr' is not a string (structured dtypes are not supported)");
        f.descr = string();
        haveDescr = true;
      } else if (key == "fortran_order") {
        f.fortranOrder = boolean();
        haveOrder = true;
      } else if (key == "shape") {
        f.shape = tuple();
        haveShape = true;
      } else {
        fail(fmt::format("unexpected key '{}' in the header", shortened(key)));
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    if (!haveDescr) fail("header has no 'descr'");
    if (!haveOrder) fail("header has no 'fortran_order'");
    if (!haveShape) fail("header has no 'shape'");
    return f;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw ir::Error(fmt::format("{}: {}", name_, why)); }

  static std::string shortened(std::string_view s) {
    return s.size() <= 40 ? std::string(s) : std::string(s.substr(0, 40)) + "...";
  }

  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(fmt::format("malformed header: expected '{}' at offset {}", c, pos_));
    ++pos_;
  }

  std::string string() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail(fmt::format("malformed header: expected a quoted string at offset {}", pos_));
    const char quote = text_[pos_++];
    const size_t close = text_.find(quote, pos_);
    if (close == std::string_view::npos) fail("malformed header: unterminated string");
    std::string s(text_.substr(pos_, close - pos_));
    pos_ = close + 1;
    return s;
  }

  bool boolean() {
    skipSpace();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    fail("'fortran_order' is neither True nor False");
  }

  std::vector<int64_t> tuple() {
    constexpr size_t kMaxRank = 64;  // numpy's own limit (NPY_MAXDIMS)
    std::vector<int64_t> out;
    expect('(');
    while (!peek(')')) {
      const size_t at = pos_;
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ')') ++pos_;
      std::string_view item = text_.substr(at, pos_ - at);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      int64_t v = 0;
      auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 0)
        fail(fmt::format("bad shape entry '{}'", shortened(item)));
      if (out.size() == kMaxRank) fail(fmt::format("the shape has more than {} dims", kMaxRank));
      out.push_back(v);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return out;
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

/// The header of a .npy file: its dtype, shape and where the data starts.
struct NpyHeader {
  DType dtype;
  std::vector<int64_t> shape;
  size_t dataStart = 0;
  int64_t dataBytes = 0;
};

/// The prefix a header needs: magic, version and the header's length.
constexpr size_t kPreambleBytes = 12;
/// A bound on a header's length (v1 headers reach 64 KiB; numpy itself
/// refuses more than 10,000 bytes unless told otherwise).
constexpr size_t kMaxHeaderBytes = 1 << 20;

/// The header's length and start from the first bytes of the file (at
/// least 10 of them, 12 for versions 2 and 3).
std::pair<size_t, size_t> headerExtent(std::string_view bytes, const std::string& name) {
  auto fail = [&](const std::string& why) { return ir::Error(fmt::format("{}: {}", name, why)); };
  if (bytes.size() < 10 || bytes.compare(0, 6, std::string_view(kMagic, 6)) != 0)
    throw fail("not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major == 1)
    return {static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8, 10};
  if (major != 2 && major != 3) throw fail(fmt::format("unsupported .npy format version {}", major));
  if (bytes.size() < 12) throw fail("truncated header");
  size_t length = 0;
  for (int k = 0; k < 4; ++k) length |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
  if (length > kMaxHeaderBytes)
    throw fail(fmt::format("the header is {} bytes; graphc reads headers of at most {}", length, kMaxHeaderBytes));
  return {length, 12};
}

/// Parses the header; `bytes` holds at least the whole header.
NpyHeader parseHeader(std::string_view bytes, const std::string& name) {
  auto fail = [&](const std::string& why) { return ir::Error(fmt::format("{}: {}", name, why)); };
  const auto [length, start] = headerExtent(bytes, name);
  if (start + length > bytes.size()) throw fail("truncated header");
  const HeaderReader::Fields f = HeaderReader(bytes.substr(start, length), name).read();
  auto dtype = dtypeOfDescr(f.descr);
  if (!dtype)
    throw fail(fmt::format("unsupported dtype '{}' (graphc reads <f2 |V2 <f4 <f8 |i1 <i4 <i8 |b1)",
                           f.descr.size() <= 40 ? f.descr : f.descr.substr(0, 40) + "..."));
  if (f.fortranOrder) throw fail("Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  const std::optional<int64_t> dataBytes = ir::bytesOf(*dtype, f.shape);
  if (!dataBytes)
    throw fail(fmt::format("shape ({}) is too large: its byte count overflows int64", fmt::join(f.shape, ", ")));
  return {*dtype, f.shape, start + length, *dataBytes};
}

ir::Error sizeMismatch(const std::string& name, const NpyHeader& h, size_t have) {
  return ir::Error(fmt::format("{}: data holds {} bytes but shape ({}) of {} needs {}", name, have,
                               fmt::join(h.shape, ", "), descrOf(h.dtype), h.dataBytes));
}

}  // namespace

Tensor parseNpy(const std::string& bytes, const std::string& name) {
  const NpyHeader h = parseHeader(bytes, name);
  // The length is checked before anything is allocated for the data.
  const size_t have = bytes.size() - h.dataStart;
  if (have != static_cast<size_t>(h.dataBytes)) throw sizeMismatch(name, h, have);
  Tensor t(h.dtype, h.shape);
  std::memcpy(t.data(), bytes.data() + h.dataStart, t.nbytes());
  return t;
}

Tensor readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ir::Error(fmt::format("{}: cannot open file", path));
  // The header first; the data is read only once the file is known to hold
  // exactly what the header declares (a regular file by its size; a stream
  // is read no further than that plus one byte).
  std::string head(kPreambleBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const auto [length, start] = headerExtent(head, path);
  head.resize(start + length);
  if (head.size() > kPreambleBytes) {
    in.read(head.data() + kPreambleBytes, static_cast<std::streamsize>(head.size() - kPreambleBytes));
    if (static_cast<size_t>(in.gcount()) != head.size() - kPreambleBytes)
      throw ir::Error(fmt::format("{}: truncated header", path));
  } else {
    in.seekg(static_cast<std::streamoff>(head.size()));  // a v1 file's header starts at byte 10
  }
  const NpyHeader h = parseHeader(head, path);
  if (const int64_t size = regularFileSize(path); size >= 0 && size - static_cast<int64_t>(h.dataStart) != h.dataBytes)
    throw sizeMismatch(path, h, static_cast<size_t>(std::max<int64_t>(size - static_cast<int64_t>(h.dataStart), 0)));
  Tensor t(h.dtype, h.shape);
  in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(h.dataBytes));
  const auto got = static_cast<size_t>(in.gcount());
  if (got != static_cast<size_t>(h.dataBytes) || in.peek() != std::char_traits<char>::eof())
    throw sizeMismatch(path, h, got + (got == static_cast<size_t>(h.dataBytes) ? 1 : 0));
  return t;
}

std::string serializeNpy(const Tensor& t) {
  std::string shape;
  for (int64_t d : t.shape()) shape += fmt::format("{}, ", d);
  if (t.rank() > 1)
    shape.resize(shape.size() - 1 - 1);  // "2, 3" rather than "2, 3, "
  else if (t.rank() == 1)
    shape.pop_back();  // "4," as Python writes a 1-tuple
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descrOf(t.dtype()), shape);
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

void writeNpy(const std::string& path, const Tensor& t) { writeFileAtomically(path, serializeNpy(t)); }

}  // namespace graphc::runtime
