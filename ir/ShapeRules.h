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

/// What a run reports for a slice from a negative `start` of a symbolic dim
/// that turns out `size` < -start long: its type gave it -start (less the
/// end's distance) elements from the end, which the dim does not have.
std::string sliceStartError(int64_t start, int64_t size);

/// The elements a slice of a static dim of `size` takes, as Python's
/// slice(start, end, step).indices(size) finds them: the first one's
/// position and how many, `step` apart. A negative step walks down from
/// `start` (absent: the last element) to just above `end` (absent: past
/// the first); bounds count from the end when negative, then clamp.
struct SliceRange {
  int64_t first = 0, count = 0;
};
SliceRange staticSlice(const AttrMap& attrs, int64_t size);

/// The dims a reduction's `dims` attribute names, normalised, in attribute
/// order; every dim when it is absent or empty. The attribute must have
/// passed the reduction's type rule.
std::vector<int64_t> reducedAxes(const AttrMap& attrs, int64_t rank);

/// A window op's geometry (conv, conv_transpose, max_pool, avg_pool), per
/// spatial dim, with the attributes' defaults filled in.
struct WindowGeometry {
  std::vector<int64_t> stride, padBegin, padEnd, dilation, outputPadding;
  bool valid = false;
};
/// Reads (and checks) the geometry of a window op with `spatial` dims; on
/// failure `valid` is false and `error` says why.
WindowGeometry windowGeometry(const OpInfo& op, const AttrMap& attrs, size_t spatial, std::string& error);

/// A pooling window's output size along spatial dim k (torch's rule for
/// ceil_mode: the last window starts inside the input or its left padding).
int64_t poolOutputSize(int64_t size, int64_t kernel, const WindowGeometry& g, size_t k, bool ceilMode);

}  // namespace graphc::ir::rules
