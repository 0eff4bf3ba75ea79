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
//
// A result that updates an input in place (ir::InputUpdate) is written
// into the caller's input tensor: run() returns that tensor as the result,
// capture() takes it as the result's output, and each replay() updates it
// again (an optimizer step, a KV cache). runtime/InputUpdates.h holds the
// checks every backend makes of such inputs and outputs.
//
// Thread safety: run() may be called from many threads at once, on one
// Executable or several (each call binds its own buffers); capture() and
// replay() of one Executable are serialised with each other.
#pragma once

#include <atomic>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/Diagnostics.h"
#include "runtime/Tensor.h"

namespace graphc::runtime {

/// The time a run spent in each of its steps, summed over the runs that
/// recorded into it (`graphc bench --profile`). The cpu backend records;
/// the others leave it empty. One run at a time records into one profile.
struct StepProfile {
  struct Entry {
    std::string step;  // "kernel k3_conv_relu", "gemm k7_matmul_add", ...
    double seconds = 0;
    int64_t calls = 0;
  };
  std::vector<Entry> entries;  // in the order the steps first ran
  std::unordered_map<std::string, size_t> index;

  void add(const std::string& step, double seconds) {
    auto [it, added] = index.try_emplace(step, entries.size());
    if (added) entries.push_back({step, 0, 0});
    entries[it->second].seconds += seconds;
    ++entries[it->second].calls;
  }
};

/// How one run() or replay() runs.
struct RunOptions {
  /// When another thread sets it, the run stops: it is checked before each
  /// step and between pieces of a kernel's iteration space (at most
  /// kCancelCheckWork elements of work apart; a GEMM between output tiles;
  /// one row of a reduction is not split), and the run throws Cancelled.
  /// The outputs are then unspecified.
  const std::atomic<bool>* cancel = nullptr;
  /// When set, each step's wall time is added to it.
  StepProfile* profile = nullptr;
};

/// How much work a kernel does between two looks at RunOptions::cancel.
constexpr int64_t kCancelCheckWork = int64_t{1} << 22;

/// Thrown by a run whose RunOptions::cancel was set, or a compile whose
/// CompileOptions::cancel was.
class Cancelled : public ir::Error {
 public:
  explicit Cancelled(const char* what = "the run was cancelled") : ir::Error(what) {}
};

/// Throws Cancelled("the compile was cancelled") if `cancel` is set: the
/// compiler looks between passes and between kernels.
inline void checkCompileCancelled(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled("the compile was cancelled");
}

/// Throws Cancelled if `options` asks the run to stop.
inline void checkCancelled(const RunOptions& options) {
  if (options.cancel && options.cancel->load(std::memory_order_relaxed)) throw Cancelled();
}

class Executable {
 public:
  virtual ~Executable() = default;

  /// Throws ir::Error for inputs that do not fit the graph (naming the
  /// input) or a step that fails (a library call, a non-converging eigh).
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs, const RunOptions& options = {}) = 0;

  /// Binds inputs and outputs (outputs must have the result types for the
  /// inputs' sizes and must not overlap the inputs, except that a result
  /// updating an input is bound to that input); throws ir::Error if not.
  virtual void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) = 0;
  /// Runs what capture() bound; throws ir::Error if nothing is captured.
  virtual void replay(const RunOptions& options = {}) = 0;

  /// The step list as text, one step per line (for dumps and tests).
  virtual std::string describe() const = 0;
};

}  // namespace graphc::runtime
