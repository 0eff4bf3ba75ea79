#include "runtime/reference/ReferenceExecutable.h"

#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "runtime/InputUpdates.h"
#include "runtime/reference/Interpreter.h"

namespace graphc::runtime {

namespace {

class InterpretingExecutable final : public Executable {
 public:
  explicit InterpretingExecutable(const ir::Graph& g) : graph_(g) {}

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const RunOptions& options) override {
    checkUpdatedInputs(graph_, inputs);
    std::vector<Tensor> results = interpret(graph_, inputs, nullptr, options);
    applyInputUpdates(graph_, inputs, results);
    return results;
  }

  void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    checkCaptureOutputs(graph_, inputs, outputs, bindInputs(graph_, inputs));
    std::lock_guard lock(captureMutex_);
    inputs_ = inputs;
    outputs_ = outputs;
    captured_ = true;
  }

  void replay(const RunOptions& options) override {
    std::lock_guard lock(captureMutex_);
    if (!captured_) throw ir::Error("replay: nothing is captured");
    std::vector<Tensor> results = interpret(graph_, inputs_, nullptr, options);
    applyInputUpdates(graph_, inputs_, results);
    for (size_t k = 0; k < results.size(); ++k)
      if (!graph_.updatedParam(k)) std::memcpy(outputs_[k].data(), results[k].data(), results[k].nbytes());
  }

  std::string describe() const override { return fmt::format("interpret @{}\n", graph_.name); }

 private:
  const ir::Graph& graph_;
  std::mutex captureMutex_;
  std::vector<Tensor> inputs_, outputs_;
  bool captured_ = false;
};

}  // namespace

std::unique_ptr<Executable> interpretingExecutable(const ir::Graph& g) {
  return std::make_unique<InterpretingExecutable>(g);
}

}  // namespace graphc::runtime
