// Type rules, one per family of ops (the `rule` column of ops.def). Each
// takes operand types and attributes (already checked against the schema)
// and returns the result types or an error message.
#pragma once

#include "ir/Ops.h"

namespace graphc::ir::rules {

#define GRAPHC_OP(id, name, min, max, results, category, rule, attrs, regions) \
  TypeRuleResult rule(const OpInfo& op, const TypeRuleInput& in);
#include "ir/ops.def"

/// NumPy/PyTorch broadcasting of two shapes; symbolic dims broadcast only
/// against an equal symbol or a static 1.
std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b, std::string& error);

/// Normalises a possibly negative axis against `rank`; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// The dims a reduction's `dims` attribute names, normalised, in attribute
/// order; every dim when it is absent or empty. The attribute must have
/// passed the reduction's type rule.
std::vector<int64_t> reducedAxes(const AttrMap& attrs, int64_t rank);

}  // namespace graphc::ir::rules
