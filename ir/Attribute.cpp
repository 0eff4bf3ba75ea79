#include "ir/Attribute.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

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

std::string toString(const Attribute& a) {
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
        out += toString(a.list[k]);
      }
      return out + "]";
    }
  }
  return "";
}

}  // namespace graphc::ir
