// The graphc subcommands. Each returns the process exit status:
// 0 success, 1 a diagnosed user error (bad graph, bad input), 2 usage.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cpu/CpuExecutable.h"
#include "frontend/DebugDump.h"
#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::tools {

struct RunOptions {
  std::string file;
  std::string device = "cpu";
  std::string arch;                 // cuda: sm_80, sm_90 (default: the device's)
  std::string matmul = "generated";  // cuda: generated | cublaslt
  std::vector<std::string> inputs;  // NAME=PATH.npy | NAME=rand[:SEED]
  std::vector<std::string> dims;    // SYM=N
  std::string saveOutputs;
  bool printOutputs = false;
  bool timePasses = false;
  int benchIters = 0;  // graphc bench: time this many calls instead of printing outputs
};

struct OptOptions {
  std::string file;  // "-" reads stdin
  std::string output = "-";
  std::string passes;
  bool passesGiven = false;
  bool printAfterAll = false;
  std::vector<std::string> printAfter;
  bool printAfterChange = false;
  bool verifyEach = true;
  bool timePasses = false;
  bool splitInputFile = false;
  bool verifyDiagnostics = false;
};

struct CompileOptions {
  std::string file;
  std::string device;
  std::string arch;
  std::string emit = "graph";
  std::string output = "-";
  std::string dumpDir;  // empty: $GRAPHC_DEBUG_DIR, if set
  bool timePasses = false;
};

struct ImportOptions {
  std::string file;
  std::string output = "-";
  std::vector<std::string> inputs;  // NAME=PATH: values to specialise on
};

/// A module read by a subcommand. For an ONNX model, the parameter each
/// graph input became (by ONNX name) and the inputs the import specialised
/// on their --input values.
struct LoadedModule {
  std::unique_ptr<ir::Module> module;  // null: diagnosed
  std::map<std::string, std::string> paramOfInput;
  std::vector<std::string> specialised;
};

/// Whether FILE is an ONNX model (`.onnx`).
bool isOnnxFile(const std::string& path);
/// Parses a .graph file or imports an ONNX model; an ONNX graph input that
/// an op needs at import time takes its value from `knownInputs`.
LoadedModule loadModule(const std::string& file, ir::DiagnosticEngine& diags,
                        const std::map<std::string, runtime::Tensor>& knownInputs = {});
/// A tensor from a .npy file or an ONNX TensorProto (.pb) file.
runtime::Tensor readTensorFile(const std::string& path);

/// Runs the default pipeline over `m`, with --time-passes' table when
/// `timePasses` and each pass's IR in `dump` when given; false when a pass
/// reported an error.
bool runDefaultPipeline(ir::Module& m, ir::DiagnosticEngine& diags, bool timePasses, DebugDump* dump = nullptr);

/// The debug dump of this compile of `m` under `dir` (or GRAPHC_DEBUG_DIR),
/// with the captured graph written; null when neither is set.
std::unique_ptr<DebugDump> openDump(const std::string& dir, const ir::Module& m);

/// The kernels' compile times as a --time-passes style table.
std::string kernelTimingTable(const codegen::cpu::CompileReport& report);

/// Writes `text` to `path`, or to stdout for "-"; false (reported) when the
/// file cannot be written.
bool writeOutput(const std::string& path, const std::string& text);

int runCommand(const RunOptions& options);
int compileCommand(const CompileOptions& options);
int optCommand(const OptOptions& options);
int importCommand(const ImportOptions& options);
int listPasses();

}  // namespace graphc::tools
