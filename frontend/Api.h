// graphc's embedding API: compile a graph (a .graph file, text, or one
// traced through frontend/Tracer.h) for a device and run it, the way a
// Python program uses torch.compile. Include <graphc/graphc.h>, which
// gathers this header, the tracer and compiled().
//
//   graphc::Executable exe = graphc::compile(graphc::Graph::load("mlp.graph"),
//                                            {.device = graphc::Device::Cpu});
//   std::vector<graphc::Tensor> out = exe.run({x, w1, b1, w2, b2});
//
// Errors reach the caller as exceptions: graphc::CompileError carries the
// same located diagnostics the CLI prints (`file:line:col: error: ...`);
// graphc::Error (ir::Error) is everything else (inputs that do not fit, a
// failing library call). The library never prints to stdout and never
// exits; the only things it writes are debug dumps (dumpDir or
// GRAPHC_DEBUG_DIR) and, when GRAPHC_LOGS asks for them, log lines on
// stderr.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Graph.h"
#include "runtime/Executable.h"
#include "runtime/Tensor.h"

namespace graphc {

using ir::DType;
/// A host tensor: owning (`Tensor(DType::F32, {2, 3})`) or wrapping the
/// caller's memory without a copy (`Tensor::wrap(dtype, shape, ptr)`).
using runtime::Tensor;
using Error = ir::Error;
/// How a run runs: RunOptions::cancel, an atomic flag another thread may
/// set to stop it (the run then throws Cancelled).
using runtime::RunOptions;
using runtime::Cancelled;

/// The package version ("0.1.0"); libgraphc.so's, for a program that
/// links it.
std::string_view version();

enum class Device { Reference, Cpu, Cuda };

std::string_view deviceName(Device d);
/// "reference", "cpu", "cuda"; nullopt for anything else.
std::optional<Device> parseDevice(std::string_view name);

/// A compile that failed with diagnostics; what() is them, formatted as the
/// CLI prints them.
class CompileError : public Error {
 public:
  explicit CompileError(std::vector<ir::Diagnostic> diagnostics);
  std::vector<ir::Diagnostic> diagnostics;
};

/// One input dim marked dynamic for compiled(): it becomes a symbolic size
/// (`symbol`, or s0, s1, ... in marking order) instead of a guarded one.
struct DynamicDim {
  size_t input = 0;
  int64_t dim = 0;
  std::string symbol;
};

struct CompileOptions {
  Device device = Device::Cpu;
  /// Comma-separated pass names (as `graphc opt --passes`); empty: the
  /// default pipeline. The backends need `fuse` and `memory-plan` last.
  std::string passes;
  /// Where to write this compile's debug dump; empty: $GRAPHC_DEBUG_DIR if
  /// set, else no dump.
  std::string dumpDir;
  /// cuda: sm_80, sm_90 (empty: the device's); the GEMM implementation.
  std::string arch;
  bool cublasLtMatmul = false;
  /// compiled() only: dims that must not be guarded, the name used in
  /// logs, and how many compiles a function may do before it falls back
  /// to the reference interpreter.
  std::vector<DynamicDim> dynamicDims;
  std::string name = "fn";
  int recompileLimit = 8;
};

/// A graph: parsed, traced or loaded. Copies share the same (immutable) IR.
class Graph {
 public:
  explicit Graph(std::unique_ptr<ir::Module> module);
  /// Parse .graph text / a file; throws CompileError with the parser's
  /// diagnostics.
  static Graph parse(std::string text, std::string bufferName = "<string>");
  /// A `.onnx` file is imported (frontend/onnx/OnnxImporter.h), with its
  /// diagnostics located in a listing of the model.
  static Graph load(const std::filesystem::path& file);

  /// The entry graph (`@main`, else the first).
  const ir::Graph& entry() const;
  const ir::Module& module() const { return *module_; }
  /// The .graph text, which parse() reads back to the same graph.
  std::string text() const;

 private:
  std::shared_ptr<const ir::Module> module_;
};

std::ostream& operator<<(std::ostream& os, const Graph& g);

/// A graph compiled for one device. Cheap to copy (copies share it).
class Executable {
 public:
  /// Checks the inputs against the graph's parameters (throws Error naming
  /// the one that does not fit), runs, returns fresh outputs. Any number of
  /// threads may run one Executable at once.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const RunOptions& options = {}) const;
  /// Binds the caller's tensors once; replay() re-runs on what they hold
  /// (a CUDA graph on cuda). Same contract as runtime::Executable; one
  /// capture at a time (replays from several threads take turns).
  void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) const;
  void replay(const RunOptions& options = {}) const;

  Device device() const;
  /// The graph after the pass pipeline (the input itself on reference).
  const Graph& optimized() const;
  /// The step list, one per line.
  std::string describe() const;
  /// This compile's dump folder; empty when nothing was dumped.
  const std::string& dumpDir() const;

 private:
  friend Executable compile(const Graph& graph, const CompileOptions& options);
  struct State;
  explicit Executable(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

/// The compile pipeline: verify, the pass pipeline, the backend. Throws
/// CompileError with located diagnostics for a graph it cannot compile,
/// Error for an unusable device ("no CUDA device: ...").
Executable compile(const Graph& graph, const CompileOptions& options = {});
/// Graph::load(file), then compile.
Executable compile(const std::filesystem::path& file, const CompileOptions& options = {});

}  // namespace graphc
