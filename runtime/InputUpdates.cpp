#include "runtime/InputUpdates.h"

#include <cstring>

#include <fmt/format.h>

#include "ir/Diagnostics.h"

namespace graphc::runtime {

bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  const std::byte *a0 = a.data(), *a1 = a0 + a.nbytes(), *b0 = b.data(), *b1 = b0 + b.nbytes();
  return a0 < b1 && b0 < a1;
}

void checkUpdatedInputs(const ir::Graph& g, const std::vector<Tensor>& inputs) {
  for (const ir::InputUpdate& u : g.inputUpdates) {
    const size_t p = static_cast<size_t>(u.param->index());
    if (p >= inputs.size()) continue;  // bindInputs reports the count
    for (size_t i = 0; i < inputs.size(); ++i)
      if (i != p && overlaps(inputs[p], inputs[i]))
        throw ir::Error(fmt::format("input {} ('%{}') is updated in place by result {} and shares memory with input {}",
                                    p, u.param->name, u.result, i));
  }
}

std::vector<Tensor> outputsFor(const ir::Graph& g, const std::vector<Tensor>& inputs, const ir::SymbolBindings& sizes) {
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < g.resultTypes.size(); ++k) {
    if (const ir::Value* p = g.updatedParam(k))
      outputs.push_back(inputs.at(static_cast<size_t>(p->index())));
    else
      outputs.push_back(
          Tensor::uninitialized(g.resultTypes[k].dtype, concreteShape(ir::substitute(g.resultTypes[k], sizes))));
  }
  return outputs;
}

void checkCaptureOutputs(const ir::Graph& g, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                         const ir::SymbolBindings& sizes) {
  if (outputs.size() != g.resultTypes.size())
    throw ir::Error(fmt::format("capture: @{} has {} results, got {} output tensors", g.name, g.resultTypes.size(),
                                outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ir::TensorType want = ir::substitute(g.resultTypes[k], sizes);
    if (outputs[k].type() != want)
      throw ir::Error(
          fmt::format("capture: output {} must be {}, got {}", k, ir::toString(want), ir::toString(outputs[k].type())));
    if (const ir::Value* p = g.updatedParam(k)) {
      const Tensor& input = inputs.at(static_cast<size_t>(p->index()));
      if (outputs[k].data() != input.data())
        throw ir::Error(
            fmt::format("capture: output {} updates input {} ('%{}') in place: bind it to that input's tensor", k,
                        p->index(), p->name));
      continue;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (overlaps(outputs[k], inputs[i])) throw ir::Error(fmt::format("capture: output {} overlaps input {}", k, i));
    for (size_t j = 0; j < k; ++j)
      if (overlaps(outputs[k], outputs[j])) throw ir::Error(fmt::format("capture: output {} overlaps output {}", k, j));
  }
  checkUpdatedInputs(g, inputs);
}

void applyInputUpdates(const ir::Graph& g, const std::vector<Tensor>& inputs, std::vector<Tensor>& results) {
  // A result that shares bytes with an input about to be written (the input
  // itself returned as another result, or as the update of another input)
  // is copied out first.
  for (size_t k = 0; k < results.size(); ++k)
    for (const ir::InputUpdate& u : g.inputUpdates) {
      const Tensor& input = inputs.at(static_cast<size_t>(u.param->index()));
      if (k == u.result || !overlaps(results[k], input)) continue;
      Tensor copy(results[k].dtype(), results[k].shape());
      std::memcpy(copy.data(), results[k].data(), copy.nbytes());
      results[k] = copy;
      break;
    }
  for (const ir::InputUpdate& u : g.inputUpdates) {
    const Tensor& input = inputs.at(static_cast<size_t>(u.param->index()));
    Tensor target = input;  // a handle to the caller's bytes
    if (results[u.result].data() != target.data())
      std::memcpy(target.data(), results[u.result].data(), target.nbytes());
    results[u.result] = target;
  }
}

}  // namespace graphc::runtime
