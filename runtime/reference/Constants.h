// Constants between their two forms: the `constant` node holding a tensor,
// and the tensor a `constant` or static `full` node holds (evaluated by the
// reference kernels, so both sides agree on every dtype's rounding).
#pragma once

#include <optional>

#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::runtime {

/// A `constant` holding `t`, inserted before `pos`; for an empty tensor,
/// whose sizes after a 0 a nested list cannot spell, a `full` of its type.
ir::Value* insertConstant(ir::Region& r, size_t pos, const Tensor& t, const ir::SourceLoc& loc);

/// The tensor a `constant` or static `full` node holds; nullopt otherwise.
std::optional<Tensor> constantTensor(const ir::Value* v);

/// The attribute form of a tensor (a nested list, or a scalar for rank 0).
ir::Attribute tensorAttribute(const Tensor& t);

}  // namespace graphc::runtime
