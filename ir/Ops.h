// The op registry: one OpInfo per line of ops.def, with the parsed attribute
// schema. Everything that asks "what is this op" goes through here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Attribute.h"
#include "ir/Type.h"

namespace graphc::ir {

enum class OpId : uint16_t {
#define GRAPHC_OP(id, name, min, max, results, category, rule, attrs, regions) id,
#include "ir/ops.def"
};

enum class OpCategory {
  Unary,
  Binary,
  Pointwise,
  Reduction,
  Normalization,
  LinAlg,
  Window,
  Shape,
  Creation,
  Control,
  Fused
};

/// What an attribute of an op must hold.
enum class AttrKind { Int, Float, Number, Bool, String, DType, Ints, Dims, Value };

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool optional;
};

/// Everything a type rule may look at.
struct TypeRuleInput {
  std::span<const TensorType> operands;
  const AttrMap& attrs;
  /// Types each region takes and returns (cond, fused).
  std::span<const std::vector<TensorType>> regionParams;
  std::span<const std::vector<TensorType>> regionResults;
  /// Result types written in the source, where they were (full needs them).
  const std::vector<TensorType>* declared = nullptr;
};

/// The inferred result types, or an error message for the op's location.
struct TypeRuleResult {
  std::vector<TensorType> types;
  std::string error;
  bool ok() const { return error.empty(); }
};

struct OpInfo;
using TypeRule = TypeRuleResult (*)(const OpInfo&, const TypeRuleInput&);

struct OpInfo {
  OpId id;
  std::string_view name;
  int minOperands;
  int maxOperands;  // -1: variadic
  int numResults;   // -1: decided by the op's regions
  OpCategory category;
  TypeRule rule;
  std::vector<AttrSpec> attrs;
  std::vector<std::string_view> regions;

  bool isPointwise() const {
    return category == OpCategory::Unary || category == OpCategory::Binary || category == OpCategory::Pointwise;
  }
  const AttrSpec* findAttr(std::string_view attrName) const;
};

const OpInfo& opInfo(OpId id);
std::optional<OpId> lookupOp(std::string_view name);
/// Every op, in table order.
std::span<const OpInfo> allOps();

std::string_view attrKindName(AttrKind k);
/// Checks one attribute value against its schema kind.
bool attrMatches(const Attribute& a, AttrKind k);

/// Checks attribute names, presence and kinds against the schema, then runs
/// the op's type rule.
TypeRuleResult inferTypes(const OpInfo& op, const TypeRuleInput& in);

}  // namespace graphc::ir
