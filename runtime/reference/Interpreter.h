// The reference interpreter: executes a graph op by op on host tensors. It
// is the oracle every backend and every pass is tested against, so it aims
// at being obviously right rather than fast: floating-point work is done in
// f64 (reductions and matmuls accumulate in f64) and rounded to the result
// dtype once per op, as PyTorch's CPU kernels round once per op.
#pragma once

#include <functional>
#include <vector>

#include "ir/Graph.h"
#include "runtime/Executable.h"
#include "runtime/Tensor.h"

namespace graphc::runtime {

/// Checks `inputs` against the graph's parameters (count, dtype, rank,
/// static sizes) and binds its symbolic sizes; throws ir::Error naming the
/// parameter that does not fit.
ir::SymbolBindings bindInputs(const ir::Graph& g, const std::vector<Tensor>& inputs);

/// Called after each node with its operands and results (tests use it to
/// check a kernel against the node it came from).
using NodeObserver =
    std::function<void(const ir::Node& n, const std::vector<Tensor>& operands, const std::vector<Tensor>& results)>;

/// Runs the graph; throws ir::Error on bad inputs or a failing library
/// call, Cancelled when options.cancel is set (checked before each node).
std::vector<Tensor> interpret(const ir::Graph& g, const std::vector<Tensor>& inputs,
                              const NodeObserver& observer = nullptr, const RunOptions& options = {});

/// Evaluates one node that has no regions (cond and fused are run by
/// interpret). `resultShapes` are its result shapes with symbols bound.
std::vector<Tensor> evaluateNode(const ir::Node& n, const std::vector<Tensor>& operands,
                                 const std::vector<std::vector<int64_t>>& resultShapes);

/// scatter_nd's writes into `data` itself (its value before is the
/// scatter's data operand): the updates stored at their places, every other
/// element left as it is, as the in-place step of a scatter into an input
/// the graph updates (a KV cache's row). Throws ir::Error, with nothing
/// written, for an index out of range.
void scatterNdInPlace(const ir::Node& n, Tensor& data, const Tensor& index, const Tensor& updates);

}  // namespace graphc::runtime
