// The cpu backend behind the Backend interface: compileGraph for
// Executables; each kernel's LLVM IR (optimised) or host assembly for
// --emit=llvm|asm; each kernel's LLVM IR for a debug dump.
#include "codegen/cpu/CpuBackend.h"

#include <chrono>

#include <fmt/format.h>

#include "codegen/cpu/CpuExecutable.h"
#include "codegen/cpu/Jit.h"
#include "codegen/cpu/KernelLibrary.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/Lowering.h"
#include "ir/Diagnostics.h"

namespace graphc::codegen::cpu {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Each kernel of `g` lowered, or a LocatedError at the fused op that
/// does not lower.
kernel::Kernel lowerAt(const ir::Node& fused) {
  try {
    return kernel::lower(fused, cpuLowerOptions());
  } catch (const ir::LocatedError&) {
    throw;
  } catch (const ir::Error& e) {
    throw ir::LocatedError(fused.loc, e.what());
  }
}

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::Cpu; }
  std::vector<std::string_view> emitKinds() const override { return {"llvm", "asm"}; }
  kernel::LowerOptions lowerOptions() const override { return cpuLowerOptions(); }
  bool readsMxInput(const kernel::Kernel& k, int input) const override { return cpu::readsMxInput(k, input); }
  bool attentionKernels() const override { return true; }

  std::unique_ptr<runtime::Executable> compile(const ir::Graph& g, const CompileOptions& options,
                                               CompileReport& report) const override {
    const auto start = std::chrono::steady_clock::now();
    CompileReport kernels;
    std::unique_ptr<runtime::Executable> exe = compileGraph(g, &kernels, options.cancel);
    report.add("backend cpu (kernels in parallel)", secondsSince(start));
    report.stages.insert(report.stages.end(), kernels.stages.begin(), kernels.stages.end());
    return exe;
  }

  std::string emit(const ir::Graph& g, std::string_view kind, const CompileOptions&, CompileReport&) const override {
    std::string out;
    for (const ir::Node* n : kernel::fusedOps(g.body)) {
      const kernel::Kernel k = lowerAt(*n);
      try {
        out += kind == "llvm" ? Jit::instance().emitLLVM(k) : Jit::instance().emitAsm(k);
      } catch (const ir::Error& e) {
        throw ir::LocatedError(n->loc, e.what());
      }
    }
    return out;
  }

  ExportedCode exportCode(const ir::Graph& g, const CompileOptions&, CompileReport& report) const override {
    const codegen::LoweredKernels lowered = codegen::lowerKernels(g, cpuLowerOptions());
    ExportedCode code;
    code.files.emplace_back("cpu/kernels.so", buildKernelLibrary(lowered, report));
    code.target = Jit::instance().target();
    return code;
  }

  std::vector<std::pair<std::string, std::string>> dumpFiles(const ir::Graph& g) const override {
    std::vector<std::pair<std::string, std::string>> files;
    for (const ir::Node* n : kernel::fusedOps(g.body)) {
      const kernel::Kernel k = lowerAt(*n);
      files.emplace_back(fmt::format("kernels/{}.ll", k.name), Jit::instance().emitLLVM(k));
    }
    return files;
  }
};

}  // namespace

const Backend& backend() {
  static const CpuBackend instance;
  return instance;
}

}  // namespace graphc::codegen::cpu
