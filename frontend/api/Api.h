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
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/Backend.h"
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
using runtime::Cancelled;
using runtime::RunOptions;

/// The package version ("0.1.0"); libgraphc.so's, for a program that
/// links it.
std::string_view version();

/// Runs the cpu backend's parallel loops on the team of an OpenMP runtime
/// already loaded in the process — PyTorch's libgomp when graphc runs
/// under torch.compile — instead of graphc's own threads, which would
/// compete with that team's spinning threads for the same cores. Results
/// are bitwise the same either way. Returns the runtime's path, or "" when
/// the process has none loaded (nothing changes then).
std::string runOnLoadedOpenMpTeam();

/// Where a graph runs: the reference interpreter, the cpu or the cuda
/// backend; deviceName / parseDevice convert to and from text.
using codegen::Device;
using codegen::deviceName;
using codegen::parseDevice;
/// cuda: GEMMs by the generated kernels or by cuBLASLt.
using codegen::MatmulImpl;

/// A compile that failed with diagnostics; what() is them, formatted as the
/// CLI prints them.
class CompileError : public Error {
 public:
  explicit CompileError(std::vector<ir::Diagnostic> diagnostics);
  std::vector<ir::Diagnostic> diagnostics;
};

/// What compile() (and compiled()) take: the device, the passes, the dump
/// folder, the cuda architecture and GEMM implementation, and compiled()'s
/// dynamic dims, name and recompile limit (codegen/Backend.h). The CLI,
/// this API and the backends share this one type.
using codegen::CompileOptions;
using codegen::DynamicDim;
/// Each stage of a compile and its wall time: what `--time-passes` prints.
using codegen::CompileReport;

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

  /// The graph with the named parameters of its entry graph bound to
  /// constants holding `values` (copied once, so the caller's tensors stay
  /// theirs to change): freezing, as torch.jit.freeze and Inductor's
  /// freezing do with a model's weights, so that the backend packs them
  /// when it compiles. Throws Error naming a parameter that does not
  /// exist or whose type the tensor does not fit.
  Graph withConstants(const std::map<std::string, Tensor>& values) const;
  /// The graph with dims of its entry parameters made symbolic
  /// (`{"x": {{0, "B"}}}`: dim 0 of %x becomes B) and every type
  /// re-inferred: a model exported with a static batch, run at any batch.
  /// Throws Error for an unknown parameter or dim, CompileError (located)
  /// where an op's rule rejects the symbolic size.
  Graph withDynamicDims(const std::map<std::string, std::map<int64_t, std::string>>& dims) const;
  /// The opposite: symbolic sizes pinned (`{"B": 4}`), every type
  /// re-inferred — `graphc export --dim B=4`. Throws Error for a symbol no
  /// parameter has or a size below 0.
  Graph withStaticDims(const std::map<std::string, int64_t>& sizes) const;
  /// The graph with results that update parameters in place (`{{1, "w"}}`:
  /// result 1 updates %w, as `-> (..., f32[4] updates %w)` in the text):
  /// a run writes the result into the tensor passed for %w and returns that
  /// tensor. Throws Error for an unknown parameter or result, CompileError
  /// (the verifier's) for a result whose type is not the parameter's or a
  /// parameter updated twice.
  Graph withInputUpdates(const std::map<size_t, std::string>& updates) const;

 private:
  std::shared_ptr<const ir::Module> module_;
};

std::ostream& operator<<(std::ostream& os, const Graph& g);

/// A model file and what loading it decided: for an ONNX model, the
/// parameter each graph input became (by ONNX name) and the inputs the
/// import specialised on the values given for them.
struct LoadedModel {
  Graph graph;
  std::map<std::string, std::string> paramOfInput;
  std::vector<std::string> specialised;
};

/// Loads a .graph file or an ONNX model (`.onnx`). `knownInputs` are
/// values for ONNX graph inputs that an op needs at import time (a
/// Reshape's shape); the graph is specialised on them. Throws
/// CompileError with located diagnostics.
LoadedModel loadModel(const std::filesystem::path& file, const std::map<std::string, Tensor>& knownInputs = {});

/// A tensor from a .npy file or an ONNX TensorProto (`.pb`) file.
Tensor readTensor(const std::filesystem::path& file);
/// The inputs of an ONNX test data set folder (input_0.pb, input_1.pb, ...:
/// each file's own name, an unnamed one the model's graph input at its
/// position) in the parameter order of `loaded`, which loadModel made of
/// `model`. Throws Error naming a parameter no file gives.
std::vector<Tensor> readTestDataInputs(const std::filesystem::path& model, const LoadedModel& loaded,
                                       const std::filesystem::path& dataSet);

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
  /// What the compile spent its time on, stage by stage.
  const CompileReport& report() const;
  /// This compile's dump folder; empty when nothing was dumped.
  const std::string& dumpDir() const;

 private:
  friend Executable compile(const Graph& graph, const CompileOptions& options);
  friend Executable loadPackage(const std::filesystem::path& file);
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

/// Ahead-of-time export (docs/export.md): the graph through compile()'s
/// pipeline, its kernels compiled for `options.device`, written with the
/// optimised graph, the step plan and the weights to one package file
/// (`.gcpkg`) that loadPackage() — or the compiler-free runtime,
/// libgraphc-runtime.so and its C API — runs. Throws CompileError as
/// compile() does, Error when the package cannot be written.
struct ExportOptions {
  /// How the weights are stored: "f32" (as they are), "f16", "bf16", or an MX format —
  /// "mxfp8" (E4M3), "mxfp6" (E2M3), "mxfp4" (E2M1), or "mxfp8_e5m2",
  /// "mxfp6_e3m2" — for the weights of linears and convolutions, which the
  /// runtime's GEMMs then read in that format (docs/export.md).
  std::string weights = "f32";
};
void exportPackage(const Graph& graph, const std::filesystem::path& out, const CompileOptions& options = {},
                   const ExportOptions& exportOptions = {});
/// Loads a package exportPackage() wrote (checking its manifest, checksums,
/// target CPU and plan); no compiler runs. Throws Error naming what is
/// wrong with the file.
Executable loadPackage(const std::filesystem::path& file);

/// What `graphc compile --emit=KIND` prints: the graph through the same
/// pipeline as compile(), then "graph" (the IR with its buffer
/// assignment), "kernels" (the kernel IR), "dot" (Graphviz), or what the
/// device's backend generates ("llvm", "asm"; "cuda", "ptx"), without
/// building an Executable (no GPU needed for cuda). `report`, if given,
/// gets the stages.
std::string emit(const Graph& graph, std::string_view kind, const CompileOptions& options = {},
                 CompileReport* report = nullptr);

}  // namespace graphc
