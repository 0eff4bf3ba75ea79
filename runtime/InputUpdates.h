// What every Executable does the same way for a graph whose results update
// inputs in place (ir::InputUpdate): the checks on the caller's tensors and
// the output list a run returns, where such a result *is* the input it
// updated (same storage; the caller sees the new value through the tensor
// it passed in).
#pragma once

#include <vector>

#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::runtime {

/// Whether two tensors share a byte.
bool overlaps(const Tensor& a, const Tensor& b);

/// Throws ir::Error when an input the graph updates in place shares bytes
/// with another input: the update would change what the other one reads.
void checkUpdatedInputs(const ir::Graph& g, const std::vector<Tensor>& inputs);

/// A run's outputs: the input itself for a result that updates it, a fresh
/// tensor of the result's type (sizes bound) for every other result.
std::vector<Tensor> outputsFor(const ir::Graph& g, const std::vector<Tensor>& inputs, const ir::SymbolBindings& sizes);

/// capture()'s check of the caller's tensors: one output per result, of
/// the result's type; a result that updates an input is bound to that
/// input's tensor (same bytes); no other output overlaps an input or
/// another output; and the inputs pass checkUpdatedInputs. Throws
/// ir::Error naming the tensor.
void checkCaptureOutputs(const ir::Graph& g, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                         const ir::SymbolBindings& sizes);

/// For an Executable that computes every result into its own tensor (the
/// interpreter): writes each result that updates an input into that input
/// and makes the result that input. Every source is read before any input
/// is written (two inputs may be swapped).
void applyInputUpdates(const ir::Graph& g, const std::vector<Tensor>& inputs, std::vector<Tensor>& results);

}  // namespace graphc::runtime
