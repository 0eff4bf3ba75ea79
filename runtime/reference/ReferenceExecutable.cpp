#include "runtime/reference/ReferenceExecutable.h"

#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "runtime/reference/Interpreter.h"

namespace graphc::runtime {

namespace {

class InterpretingExecutable final : public Executable {
 public:
  explicit InterpretingExecutable(const ir::Graph& g) : graph_(g) {}

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const RunOptions& options) override {
    return interpret(graph_, inputs, nullptr, options);
  }

  void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    std::vector<Tensor> expected = interpret(graph_, inputs);
    if (outputs.size() != expected.size())
      throw ir::Error(
          fmt::format("capture: @{} has {} results, {} outputs given", graph_.name, expected.size(), outputs.size()));
    for (size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k].type() != expected[k].type())
        throw ir::Error(fmt::format("capture: output {} is {}, the result is {}", k, ir::toString(outputs[k].type()),
                                    ir::toString(expected[k].type())));
    std::lock_guard lock(captureMutex_);
    inputs_ = inputs;
    outputs_ = outputs;
    captured_ = true;
  }

  void replay(const RunOptions& options) override {
    std::lock_guard lock(captureMutex_);
    if (!captured_) throw ir::Error("replay: nothing is captured");
    std::vector<Tensor> results = interpret(graph_, inputs_, nullptr, options);
    for (size_t k = 0; k < results.size(); ++k) std::memcpy(outputs_[k].data(), results[k].data(), results[k].nbytes());
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
