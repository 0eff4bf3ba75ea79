#include "ir/Ops.h"

#include <array>
#include <sstream>

#include <fmt/format.h>

#include "ir/ShapeRules.h"

namespace graphc::ir {

namespace {

std::vector<AttrSpec> parseAttrSchema(std::string_view schema) {
  std::vector<AttrSpec> specs;
  std::istringstream words{std::string(schema)};
  std::string word;
  while (words >> word) {
    size_t colon = word.find(':');
    std::string name = word.substr(0, colon);
    std::string kind = word.substr(colon + 1);
    bool optional = !name.empty() && name.back() == '?';
    if (optional) name.pop_back();
    AttrKind k = AttrKind::Int;
    if (kind == "int")
      k = AttrKind::Int;
    else if (kind == "float")
      k = AttrKind::Float;
    else if (kind == "number")
      k = AttrKind::Number;
    else if (kind == "bool")
      k = AttrKind::Bool;
    else if (kind == "string")
      k = AttrKind::String;
    else if (kind == "dtype")
      k = AttrKind::DType;
    else if (kind == "ints")
      k = AttrKind::Ints;
    else if (kind == "dims")
      k = AttrKind::Dims;
    else if (kind == "value")
      k = AttrKind::Value;
    specs.push_back({name, k, optional});
  }
  return specs;
}

std::vector<std::string_view> splitWords(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(' ', pos);
    if (end == std::string_view::npos) end = s.size();
    if (end > pos) out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::vector<OpInfo> buildTable() {
  std::vector<OpInfo> table;
#define GRAPHC_OP(id, name, min, max, results, category, rule, attrs, regions)                  \
  table.push_back(OpInfo{OpId::id, name, min, max, results, OpCategory::category, &rules::rule, \
                         parseAttrSchema(attrs), splitWords(regions)});
#include "ir/ops.def"
  return table;
}

const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> t = buildTable();
  return t;
}

bool isNestedNumberList(const Attribute& a) {
  if (a.isNumber() || a.kind == Attribute::Kind::Bool) return true;
  if (a.kind != Attribute::Kind::List) return false;
  for (const Attribute& item : a.list)
    if (!isNestedNumberList(item)) return false;
  return true;
}

}  // namespace

const AttrSpec* OpInfo::findAttr(std::string_view attrName) const {
  for (const AttrSpec& s : attrs)
    if (s.name == attrName) return &s;
  return nullptr;
}

const OpInfo& opInfo(OpId id) { return table()[static_cast<size_t>(id)]; }

std::optional<OpId> lookupOp(std::string_view name) {
  for (const OpInfo& info : table())
    if (info.name == name) return info.id;
  return std::nullopt;
}

std::span<const OpInfo> allOps() { return table(); }

std::string_view attrKindName(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "an integer";
    case AttrKind::Float: return "a float";
    case AttrKind::Number: return "a number";
    case AttrKind::Bool: return "a bool";
    case AttrKind::String: return "a string";
    case AttrKind::DType: return "a dtype";
    case AttrKind::Ints: return "a list of integers";
    case AttrKind::Dims: return "a list of sizes (integers or symbols)";
    case AttrKind::Value: return "a number, a bool, a nested list of them or a dense value";
  }
  return "?";
}

bool attrMatches(const Attribute& a, AttrKind k) {
  using K = Attribute::Kind;
  switch (k) {
    case AttrKind::Int: return a.kind == K::Int;
    case AttrKind::Float: return a.kind == K::Float;
    case AttrKind::Number: return a.isNumber();
    case AttrKind::Bool: return a.kind == K::Bool;
    case AttrKind::String: return a.kind == K::String;
    case AttrKind::DType: return a.kind == K::DType;
    case AttrKind::Ints:
      if (a.kind != K::List) return false;
      for (const Attribute& item : a.list)
        if (item.kind != K::Int) return false;
      return true;
    case AttrKind::Dims:
      if (a.kind != K::List) return false;
      for (const Attribute& item : a.list)
        if (item.kind != K::Int && item.kind != K::Symbol) return false;
      return true;
    case AttrKind::Value: return isNestedNumberList(a) || a.kind == K::Dense;
  }
  return false;
}

TypeRuleResult inferTypes(const OpInfo& op, const TypeRuleInput& in) {
  for (const auto& [name, value] : in.attrs) {
    const AttrSpec* spec = op.findAttr(name);
    if (!spec) return {{}, fmt::format("'{}' has no attribute '{}'", op.name, name)};
    if (!attrMatches(value, spec->kind))
      return {{},
              fmt::format("attribute '{}' of '{}' must be {}, got {}", name, op.name, attrKindName(spec->kind),
                          toString(value))};
  }
  for (const AttrSpec& spec : op.attrs)
    if (!spec.optional && !in.attrs.find(spec.name))
      return {{}, fmt::format("'{}' needs attribute '{}' ({})", op.name, spec.name, attrKindName(spec.kind))};
  int n = static_cast<int>(in.operands.size());
  if (n < op.minOperands || (op.maxOperands >= 0 && n > op.maxOperands)) {
    std::string expected = op.maxOperands < 0                 ? fmt::format("at least {}", op.minOperands)
                           : op.minOperands == op.maxOperands ? std::to_string(op.minOperands)
                                                              : fmt::format("{} to {}", op.minOperands, op.maxOperands);
    return {{},
            fmt::format("'{}' takes {} operand{}, got {}", op.name, expected,
                        op.maxOperands == 1 && op.minOperands == 1 ? "" : "s", n)};
  }
  return op.rule(op, in);
}

}  // namespace graphc::ir
