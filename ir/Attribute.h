// Attribute values of .graph statements: `{dims = [0, 1], keepdim = true}`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/DType.h"

namespace graphc::ir {

/// One attribute value. A List holds nested values (tensor literals are
/// nested lists of numbers).
struct Attribute {
  enum class Kind : uint8_t { Int, Float, Bool, String, DType, Symbol, List };

  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  ir::DType dtype = ir::DType::F32;
  std::string s;  // String and Symbol
  std::vector<Attribute> list;

  static Attribute ofInt(int64_t v);
  static Attribute ofFloat(double v);
  static Attribute ofBool(bool v);
  static Attribute ofString(std::string v);
  static Attribute ofDType(ir::DType t);
  static Attribute ofSymbol(std::string name);
  static Attribute ofList(std::vector<Attribute> items);
  static Attribute ofInts(const std::vector<int64_t>& v);

  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  /// The value as a double (Int, Float and Bool).
  double asDouble() const;
  bool operator==(const Attribute&) const = default;
};

/// A node's attributes, kept sorted by name so that printing and hashing
/// are deterministic.
class AttrMap {
 public:
  void set(const std::string& name, Attribute value);
  const Attribute* find(std::string_view name) const;
  bool erase(std::string_view name);
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  bool operator==(const AttrMap&) const = default;

 private:
  std::vector<std::pair<std::string, Attribute>> items_;
};

std::string kindName(Attribute::Kind k);
/// Text form, parseable by the .graph parser (floats always carry a '.' or
/// an exponent so they stay floats).
std::string toString(const Attribute& a);

}  // namespace graphc::ir
