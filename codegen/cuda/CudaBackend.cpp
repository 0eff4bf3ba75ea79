// The cuda backend behind the Backend interface: compileGraph for
// Executables (device 0); the graph's one CUDA C++ module, or NVRTC's PTX
// of it, for --emit=cuda|ptx (no GPU needed); the module for a debug dump.
#include "codegen/cuda/CudaBackend.h"

#include <chrono>

#include <fmt/format.h>

#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "codegen/cuda/Nvrtc.h"

namespace graphc::codegen::cuda {

namespace {

class CudaBackend final : public Backend {
 public:
  Device device() const override { return Device::Cuda; }
  std::vector<std::string_view> emitKinds() const override { return {"cuda", "ptx"}; }

  std::string unavailableReason() const override {
    const std::string reason = noDeviceReason();
    return reason.empty() ? "" : "no CUDA device: " + reason;
  }

  std::unique_ptr<runtime::Executable> compile(const ir::Graph& g, const CompileOptions& options,
                                               CompileReport& report) const override {
    const auto start = std::chrono::steady_clock::now();
    CompileReport nvrtc;
    std::unique_ptr<runtime::Executable> exe = compileGraph(g, options, &nvrtc);
    report.add("backend cuda", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    report.stages.insert(report.stages.end(), nvrtc.stages.begin(), nvrtc.stages.end());
    return exe;
  }

  std::string emit(const ir::Graph& g, std::string_view kind, const CompileOptions& options,
                   CompileReport& report) const override {
    const CudaModule m = emitGraph(g);
    if (kind == "cuda") return m.source;
    const CompiledModule ptx = compileModule(m.source, options.arch.empty() ? "sm_90" : options.arch, Output::Ptx);
    report.add(fmt::format("nvrtc: {} kernels to PTX", m.kernels.size()), ptx.seconds);
    return ptx.binary;
  }

  std::vector<std::pair<std::string, std::string>> dumpFiles(const ir::Graph& g) const override {
    return {{"module.cu", emitGraph(g).source}};
  }
};

}  // namespace

const Backend& backend() {
  static const CudaBackend instance;
  return instance;
}

}  // namespace graphc::codegen::cuda
