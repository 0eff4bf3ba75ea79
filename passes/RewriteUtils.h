// Small helpers the rewriting passes share: building nodes in place,
// reading constants, sweeping dead nodes.
#pragma once

#include <optional>

#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::passes {

/// Inserts a node before position `pos` of `r`, with results of `types`.
ir::Node* insertNode(ir::Region& r, size_t pos, ir::OpId op, std::vector<ir::Value*> operands, ir::AttrMap attrs,
                     const std::vector<ir::TensorType>& types, const ir::SourceLoc& loc);

/// Builds single-result nodes one after another from a position in a
/// region, inferring each result type with the op's type rule.
class NodeBuilder {
 public:
  NodeBuilder(ir::Region& r, size_t pos, ir::SourceLoc loc) : region_(r), pos_(pos), loc_(std::move(loc)) {}
  ir::Value* op(ir::OpId op, std::vector<ir::Value*> operands, ir::AttrMap attrs = {});
  ir::Value* scalar(ir::DType dtype, double value);
  /// Where the next node goes (the node the builder was placed before has moved down).
  size_t position() const { return pos_; }

 private:
  ir::Region& region_;
  size_t pos_;
  ir::SourceLoc loc_;
};

/// A shape as the `shape` attribute of reshape or expand: sizes and NAMEs.
ir::Attribute shapeAttribute(const ir::Shape& shape);

/// `value` as the attribute a scalar of `dtype` holds (float, int or bool).
ir::Attribute scalarAttribute(ir::DType dtype, double value);

/// A `constant` holding `t`, inserted before `pos`; for an empty tensor,
/// whose sizes after a 0 a nested list cannot spell, a `full` of its type.
ir::Value* insertConstant(ir::Region& r, size_t pos, const runtime::Tensor& t, const ir::SourceLoc& loc);

/// A scalar `constant` of `dtype` holding `value`, inserted before `pos`.
ir::Value* insertScalarConstant(ir::Region& r, size_t pos, ir::DType dtype, double value, const ir::SourceLoc& loc);

/// The value every element of `v` has, when `v` is a `full` or a `constant`
/// whose elements are all equal.
std::optional<double> splatValue(const ir::Value* v);

/// The tensor a `constant` or static `full` node holds; nullopt otherwise.
std::optional<runtime::Tensor> constantTensor(const ir::Value* v);

/// The attribute form of a tensor (a nested list, or a scalar for rank 0).
ir::Attribute tensorAttribute(const runtime::Tensor& t);

/// Removes nodes whose results are unused, in `r` and its nested regions.
bool removeDeadNodes(ir::Region& r);

/// Position of `n` in its region.
size_t positionOf(const ir::Node& n);

}  // namespace graphc::passes
