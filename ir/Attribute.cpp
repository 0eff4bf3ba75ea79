#include "ir/Attribute.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "ir/Half.h"

namespace graphc::ir {

Attribute Attribute::ofInt(int64_t v) {
  Attribute a;
  a.kind = Kind::Int;
  a.i = v;
  return a;
}
Attribute Attribute::ofFloat(double v) {
  Attribute a;
  a.kind = Kind::Float;
  a.f = v;
  return a;
}
Attribute Attribute::ofBool(bool v) {
  Attribute a;
  a.kind = Kind::Bool;
  a.b = v;
  return a;
}
Attribute Attribute::ofString(std::string v) {
  Attribute a;
  a.kind = Kind::String;
  a.s = std::move(v);
  return a;
}
Attribute Attribute::ofDType(ir::DType t) {
  Attribute a;
  a.kind = Kind::DType;
  a.dtype = t;
  return a;
}
Attribute Attribute::ofSymbol(std::string name) {
  Attribute a;
  a.kind = Kind::Symbol;
  a.s = std::move(name);
  return a;
}
Attribute Attribute::ofList(std::vector<Attribute> items) {
  Attribute a;
  a.kind = Kind::List;
  a.list = std::move(items);
  return a;
}
Attribute Attribute::ofInts(const std::vector<int64_t>& v) {
  std::vector<Attribute> items;
  for (int64_t x : v) items.push_back(ofInt(x));
  return ofList(std::move(items));
}

Attribute Attribute::ofMx(std::vector<int64_t> shape, std::shared_ptr<const MxWeights> mx) {
  auto d = std::make_shared<DenseElements>();
  d->dtype = DType::F32;
  d->shape = std::move(shape);
  d->mx = std::move(mx);
  Attribute a;
  a.kind = Kind::Dense;
  a.dense = std::move(d);
  return a;
}

Attribute Attribute::ofDense(DType dtype, std::vector<int64_t> shape, std::shared_ptr<const void> owner,
                             const std::byte* data, size_t nbytes) {
  auto d = std::make_shared<DenseElements>();
  d->dtype = dtype;
  d->shape = std::move(shape);
  d->owner = std::move(owner);
  d->data = data;
  d->nbytes = nbytes;
  if (static_cast<size_t>(d->numel()) * static_cast<size_t>(dtypeSize(dtype)) != nbytes)
    throw std::logic_error("Attribute::ofDense: byte count does not match the shape");
  Attribute a;
  a.kind = Kind::Dense;
  a.dense = std::move(d);
  return a;
}

int64_t DenseElements::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Attribute DenseElements::element(int64_t i) const {
  if (mx) {  // its row dequantised
    std::vector<float> row(static_cast<size_t>(mx->cols));
    mx->dequantize(i / mx->cols, i / mx->cols + 1, row.data());
    return Attribute::ofFloat(row[static_cast<size_t>(i % mx->cols)]);
  }
  const std::byte* p = data + i * dtypeSize(dtype);
  auto load = [&]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (dtype) {
    case DType::F16: return Attribute::ofFloat(f16ToFloat(load(uint16_t{})));
    case DType::BF16: return Attribute::ofFloat(bf16ToFloat(load(uint16_t{})));
    case DType::F32: return Attribute::ofFloat(load(float{}));
    case DType::F64: return Attribute::ofFloat(load(double{}));
    case DType::I8: return Attribute::ofInt(load(int8_t{}));
    case DType::I32: return Attribute::ofInt(load(int32_t{}));
    case DType::I64: return Attribute::ofInt(load(int64_t{}));
    case DType::Bool: return Attribute::ofBool(load(uint8_t{}) != 0);
  }
  return {};
}

bool DenseElements::isSplat() const {
  if (mx) return false;  // (not worth decoding: only GEMMs read these)
  const size_t width = static_cast<size_t>(dtypeSize(dtype));
  for (size_t at = width; at < nbytes; at += width)
    if (std::memcmp(data, data + at, width) != 0) return false;
  return true;
}

std::optional<Attribute> firstElement(const Attribute& a) {
  const Attribute* p = &a;
  while (p->kind == Attribute::Kind::List) {
    if (p->list.empty()) return std::nullopt;
    p = &p->list[0];
  }
  if (p->kind != Attribute::Kind::Dense) return *p;
  if (p->dense->numel() == 0) return std::nullopt;
  return p->dense->element(0);
}

bool Attribute::operator==(const Attribute& o) const {
  if (kind != o.kind || i != o.i || b != o.b || dtype != o.dtype || s != o.s || list != o.list) return false;
  if (!(f == o.f || (std::isnan(f) && std::isnan(o.f)))) return false;
  if (dense == o.dense) return true;
  if (!dense || !o.dense) return false;
  if (dense->mx || o.dense->mx) return dense->mx == o.dense->mx && dense->shape == o.dense->shape;
  return dense->dtype == o.dense->dtype && dense->shape == o.dense->shape && dense->nbytes == o.dense->nbytes &&
         std::memcmp(dense->data, o.dense->data, dense->nbytes) == 0;
}

double Attribute::asDouble() const {
  switch (kind) {
    case Kind::Int: return static_cast<double>(i);
    case Kind::Float: return f;
    case Kind::Bool: return b ? 1.0 : 0.0;
    default: return 0.0;
  }
}

void AttrMap::set(const std::string& name, Attribute value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, const std::string& n) { return item.first < n; });
  if (it != items_.end() && it->first == name)
    it->second = std::move(value);
  else
    items_.insert(it, {name, std::move(value)});
}

const Attribute* AttrMap::find(std::string_view name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return &v;
  return nullptr;
}

bool AttrMap::erase(std::string_view name) {
  auto it = std::find_if(items_.begin(), items_.end(), [&](const auto& item) { return item.first == name; });
  if (it == items_.end()) return false;
  items_.erase(it);
  return true;
}

std::string kindName(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::Int: return "integer";
    case Attribute::Kind::Float: return "float";
    case Attribute::Kind::Bool: return "bool";
    case Attribute::Kind::String: return "string";
    case Attribute::Kind::DType: return "dtype";
    case Attribute::Kind::Symbol: return "symbol";
    case Attribute::Kind::List: return "list";
    case Attribute::Kind::Dense: return "dense";
  }
  return "?";
}

namespace {
std::string floatText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);  // shortest text that reads back exactly
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string toString(const Attribute& a, const AttributeTextOptions& options) {
  switch (a.kind) {
    case Attribute::Kind::Int: return std::to_string(a.i);
    case Attribute::Kind::Float: return floatText(a.f);
    case Attribute::Kind::Bool: return a.b ? "true" : "false";
    case Attribute::Kind::String: return quoted(a.s);
    case Attribute::Kind::DType: return std::string(dtypeName(a.dtype));
    case Attribute::Kind::Symbol: return a.s;
    case Attribute::Kind::List: {
      std::string out = "[";
      for (size_t k = 0; k < a.list.size(); ++k) {
        if (k) out += ", ";
        out += toString(a.list[k], options);
      }
      return out + "]";
    }
    case Attribute::Kind::Dense: {
      const DenseElements& d = *a.dense;
      std::string out = fmt::format("dense<{}[{}], ", dtypeName(d.dtype), fmt::join(d.shape, ", "));
      if (options.denseReference) return out + fmt::format("weights[\"{}\"]>", options.denseReference(d));
      if (d.mx) return out + fmt::format("{}>", mxFormatInfo(d.mx->format).name);
      if (options.elideDenseAbove >= 0 && d.numel() > options.elideDenseAbove) return out + "__elided__>";
      static constexpr char kHex[] = "0123456789ABCDEF";
      out.reserve(out.size() + 2 * d.nbytes + 6);
      out += "\"0x";
      for (std::byte c : d.bytes()) {
        out += kHex[static_cast<unsigned>(c) >> 4];
        out += kHex[static_cast<unsigned>(c) & 15];
      }
      return out + "\">";
    }
  }
  return "";
}

}  // namespace graphc::ir
