// Building IR in place: nodes inserted at a position of a region with
// their result types, single-result nodes whose types the op's type rule
// infers, and the attribute forms of shapes and scalars. The parser's
// literals, the tracer, the ONNX converters and the passes all build
// through these.
#pragma once

#include <optional>

#include "ir/Graph.h"

namespace graphc::ir {

/// Inserts a node before position `pos` of `r`, with results of `types`.
Node* insertNode(Region& r, size_t pos, OpId op, std::vector<Value*> operands, AttrMap attrs,
                 const std::vector<TensorType>& types, const SourceLoc& loc);

/// Builds single-result nodes one after another from a position in a
/// region, inferring each result type with the op's type rule.
class NodeBuilder {
 public:
  NodeBuilder(Region& r, size_t pos, SourceLoc loc) : region_(r), pos_(pos), loc_(std::move(loc)) {}
  Value* op(OpId op, std::vector<Value*> operands, AttrMap attrs = {});
  Value* scalar(DType dtype, double value);
  /// Where the next node goes (the node the builder was placed before has moved down).
  size_t position() const { return pos_; }
  /// A position for one node inserted by other means (insertNode, a
  /// constant); the builder moves past it.
  size_t reserve() { return pos_++; }
  Region& region() { return region_; }

 private:
  Region& region_;
  size_t pos_;
  SourceLoc loc_;
};

/// A shape as the `shape` attribute of reshape or expand: sizes and NAMEs.
Attribute shapeAttribute(const Shape& shape);

/// `value` as the attribute a scalar of `dtype` holds (float, int or bool).
Attribute scalarAttribute(DType dtype, double value);

/// A scalar `constant` of `dtype` holding `value`, inserted before `pos`.
Value* insertScalarConstant(Region& r, size_t pos, DType dtype, double value, const SourceLoc& loc);

/// The value every element of `v` has, when `v` is a `full` or a `constant`
/// whose elements are all equal.
std::optional<double> splatValue(const Value* v);

/// Position of `n` in its region.
size_t positionOf(const Node& n);

}  // namespace graphc::ir
