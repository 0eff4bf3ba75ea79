// An Executable is a graph compiled for one device: an ordered list of
// steps (kernels, library calls, cond steps holding the branches' own step
// lists) over buffers in one arena laid out by the memory-plan pass. Every
// backend implements this interface, so callers (the CLI, tests,
// benchmarks, embedding programs) do not care which device runs a graph.
//
//   run(inputs)            validates the inputs, evaluates the symbolic
//                          sizes, runs, returns freshly allocated outputs;
//   capture(inputs, outs)  validates and binds caller-owned tensors once and
//                          prepares every step's arguments;
//   replay()               re-runs the bound steps on whatever the bound
//                          tensors hold now, with no per-call shape work (as
//                          torch.accelerator.Graph / CUDA graph replay).
#pragma once

#include <string>
#include <vector>

#include "runtime/Tensor.h"

namespace graphc::runtime {

class Executable {
 public:
  virtual ~Executable() = default;

  /// Throws ir::Error for inputs that do not fit the graph (naming the
  /// input) or a step that fails (a library call, a non-converging eigh).
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs) = 0;

  /// Binds inputs and outputs (outputs must have the result types for the
  /// inputs' sizes and must not overlap the inputs); throws ir::Error if not.
  virtual void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) = 0;
  /// Runs what capture() bound; throws ir::Error if nothing is captured.
  virtual void replay() = 0;

  /// The step list as text, one step per line (for dumps and tests).
  virtual std::string describe() const = 0;
};

}  // namespace graphc::runtime
