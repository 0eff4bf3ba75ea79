// The backends graphc compiles for, behind one interface and one registry
// (XLA's Compiler::GetForPlatform is the model): each declares its device,
// the --emit kinds it generates, and how it compiles a graph into an
// Executable. The optional backends (cpu needs LLVM, cuda the CUDA
// Toolkit) are registered in Backends.cpp, the one file that knows which
// this build has; everything else asks the registry.
//
// Also here, because every layer above shares them: the one options type
// of a compile (CLI, C++ API and backends alike) and the one report of its
// stages (what --time-passes prints and a debug dump's timing.txt holds).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/Graph.h"
#include "runtime/Executable.h"

namespace graphc::codegen {

namespace kernel {
struct LowerOptions;  // codegen/kernel/Lowering.h
struct Kernel;        // codegen/kernel/KernelIR.h
}  // namespace kernel

enum class Device { Reference, Cpu, Cuda };

/// "reference", "cpu", "cuda".
std::string_view deviceName(Device d);
std::optional<Device> parseDevice(std::string_view name);

/// How cuda computes GEMMs: its generated tiled kernels, or cuBLASLt with
/// its epilogues (the measured comparison).
enum class MatmulImpl { Generated, CublasLt };
std::optional<MatmulImpl> parseMatmulImpl(std::string_view name);  // "generated", "cublaslt"

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
  /// default pipeline. The cpu and cuda backends need `fuse` last.
  std::string passes;
  /// Where to write this compile's debug dump; empty: $GRAPHC_DEBUG_DIR if
  /// set, else no dump.
  std::string dumpDir;
  /// Text dumps (--emit=graph, debug dumps) print dense constants in full
  /// instead of eliding those above 16 elements.
  bool printWeights = false;
  /// cuda: sm_80, sm_90 (empty: the device's); how GEMMs are computed.
  std::string arch;
  MatmulImpl matmul = MatmulImpl::Generated;
  /// compiled() only: dims that must not be guarded, the name used in
  /// logs, and how many compiles a function may do before it falls back
  /// to the reference interpreter.
  std::vector<DynamicDim> dynamicDims;
  std::string name = "fn";
  int recompileLimit = 8;
  /// A flag another thread may set to stop the compile: it is looked at
  /// before each pass and each kernel's code generation, and the compile
  /// then throws runtime::Cancelled ("the compile was cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

/// What a compile spent its time on, stage by stage: each pass, then the
/// backend (a `detail` stage — one kernel of several compiled in parallel
/// — is listed under its stage but not summed).
struct CompileReport {
  struct Stage {
    std::string name;
    double seconds = 0;
    bool detail = false;
  };
  std::vector<Stage> stages;
  /// The folder this compile's debug dump went to; empty when none.
  std::string dumpDir;

  void add(std::string name, double seconds, bool detail = false) {
    stages.push_back({std::move(name), seconds, detail});
  }
  /// The stages as `//` comment lines with milliseconds and a total.
  std::string table() const;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual Device device() const = 0;
  std::string_view name() const { return deviceName(device()); }

  /// Whether it takes the fused graph the pass pipeline makes (the
  /// reference device runs the graph as given).
  virtual bool runsPipeline() const { return true; }
  /// The --emit kinds it generates, beyond the IR kinds every backend has.
  virtual std::vector<std::string_view> emitKinds() const { return {}; }
  /// Why it cannot run graphs on this machine ("" when it can).
  virtual std::string unavailableReason() const { return ""; }
  /// Whether it runs attention kernels (ir::KernelKind::Attention): the
  /// default pipeline then forms them (fuse-attention).
  virtual bool attentionKernels() const { return false; }
  /// How it lowers fused ops to the kernel IR (what --emit=kernels and a
  /// debug dump print for it).
  virtual kernel::LowerOptions lowerOptions() const;  // the defaults (Backend.cpp)
  /// Whether its kernel `k` can read input `input` held in an MX format
  /// (codegen/MxOperands.h): what an export may store so. None by default.
  virtual bool readsMxInput(const kernel::Kernel& k, int input) const;

  /// Compiles `g` (already through the pipeline when runsPipeline()); the
  /// Executable refers to `g`, which must outlive it. Throws
  /// ir::LocatedError at a node it cannot compile, ir::Error otherwise.
  virtual std::unique_ptr<runtime::Executable> compile(const ir::Graph& g, const CompileOptions& options,
                                                       CompileReport& report) const = 0;
  /// The text of one of emitKinds() for `g` (LLVM IR, CUDA C++, PTX).
  virtual std::string emit(const ir::Graph& g, std::string_view kind, const CompileOptions& options,
                           CompileReport& report) const;
  /// What a debug dump holds of `g`'s generated code: (file, text) pairs.
  virtual std::vector<std::pair<std::string, std::string>> dumpFiles(const ir::Graph& g) const;

  /// The compiled code an exported package of `g` holds (docs/export.md):
  /// its files (cpu: kernels.so) and what they were compiled for
  /// ("triple", "cpu", "features", ...). Throws ir::Error for a backend
  /// that cannot export, ir::LocatedError at a kernel it cannot compile.
  struct ExportedCode {
    std::vector<std::pair<std::string, std::string>> files;
    std::map<std::string, std::string> target;
  };
  virtual ExportedCode exportCode(const ir::Graph& g, const CompileOptions& options, CompileReport& report) const;
};

/// The backend of a device; throws ir::Error naming what the build lacked
/// when this build has none ("this graphc was built without the cuda
/// backend (no CUDA Toolkit at build time)").
const Backend& backendFor(Device d);
/// Whether this build has the device's backend.
bool hasBackend(Device d);
/// The backend that generates an --emit kind; null when none does.
const Backend* backendForEmit(std::string_view kind);

}  // namespace graphc::codegen
