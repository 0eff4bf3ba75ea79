// Constants between their two forms: the `constant` node holding a tensor,
// and the tensor a `constant` or static `full` node holds (evaluated by the
// reference kernels, so both sides agree on every dtype's rounding).
#pragma once

#include <optional>

#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::runtime {

/// A `constant` holding `t`, inserted before `pos`: up to 16 elements as a
/// list of numbers, more as dense elements sharing `t`'s storage (the caller
/// must not write to `t` afterwards); for an empty tensor, a `full` of its
/// type.
ir::Value* insertConstant(ir::Region& r, size_t pos, const Tensor& t, const ir::SourceLoc& loc);

/// The tensor a `constant` or static `full` node holds; nullopt otherwise.
std::optional<Tensor> constantTensor(const ir::Value* v);

/// The attribute form of a tensor as a nested list, or a scalar for rank 0
/// (for small values written by hand or shown in tests).
ir::Attribute tensorAttribute(const Tensor& t);

/// Dense elements sharing `t`'s storage (no copy; `t` must not be written
/// to afterwards).
ir::Attribute denseAttribute(const Tensor& t);

}  // namespace graphc::runtime
