// compiled(fn), the TorchDynamo analog: wraps a traced function in a
// callable that traces and compiles on its first call and then reuses the
// Executable while the inputs pass its guards.
//
//   auto mlp = graphc::compiled(forward, {.device = graphc::Device::Cpu, .name = "mlp"});
//   auto out = mlp({x, w1, b1});   // traces, compiles, runs
//   out = mlp({x2, w1, b1});       // x2 has a new batch size: recompiles
//
// Guards, per input: dtype, rank and every static size, plus the number of
// inputs; the device is the one the function is compiled for (graphc's
// tensors live in host memory, and an Executable of any device takes
// them). One Executable is cached per guard set, most recent first. A
// guard failure against every cached entry recompiles, and reports why
// against the most recent one:
//
//   GRAPHC_LOGS=recompiles  →  stderr: recompiling mlp: input 0 dim 0: 32 != 64
//
// (guarded size != new size). Dims listed in CompileOptions::dynamicDims
// are traced as symbolic sizes and not guarded, so they never recompile.
// After recompileLimit compiles, a call that fits no entry warns once and
// runs on the reference interpreter (torch's fallback to eager).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "frontend/api/Api.h"
#include "frontend/api/Tracer.h"

namespace graphc {

/// What a CompiledFunction has done so far.
struct CompileStats {
  int compiles = 0;       // traces compiled (the first and each recompile)
  int cacheHits = 0;      // calls served by a cached Executable
  int fallbackCalls = 0;  // calls run on the reference interpreter
  std::vector<std::string> recompileReasons;
};

class CompiledFunction {
 public:
  /// Where log lines go (default: stderr, for the topics GRAPHC_LOGS names).
  using LogSink = std::function<void(const std::string& line)>;

  CompiledFunction(BranchFn fn, CompileOptions options);

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  /// Which guard of the most recent entry `inputs` fail ("" if none, or if
  /// nothing is cached yet). Cheap: what every call does first.
  std::string checkGuards(const std::vector<Tensor>& inputs) const;
  CompileStats stats() const;
  /// Replaces the log sink; every recompile and the fallback warning go to
  /// it, whatever GRAPHC_LOGS says.
  void setLogSink(LogSink sink);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// fn takes a TracedList or one TracedTensor per input and returns what
/// trace() accepts.
template <typename F>
CompiledFunction compiled(F fn, CompileOptions options = {}) {
  return CompiledFunction(detail::asBranch(std::move(fn)), std::move(options));
}

}  // namespace graphc
