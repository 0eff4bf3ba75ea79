// The cuda backend behind the Backend interface: compileGraph for
// Executables (device 0); the graph's one CUDA C++ module, or NVRTC's PTX
// of it, for --emit=cuda|ptx (no GPU needed); the module for a debug dump;
// the module, its cubins and PTX for an exported package (no GPU needed).
#include "codegen/cuda/CudaBackend.h"

#include <chrono>
#include <future>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "codegen/cuda/Nvrtc.h"

namespace graphc::codegen::cuda {

namespace {

class CudaBackend final : public Backend {
 public:
  Device device() const override { return Device::Cuda; }
  std::vector<std::string_view> emitKinds() const override { return {"cuda", "ptx"}; }
  bool readsMxInput(const kernel::Kernel& k, int input) const override { return cuda::readsMxInput(k, input); }

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

  /// The module's CUDA C++, a cubin per architecture (options.arch, else
  /// kExportArchs) and the PTX of the oldest, which the driver compiles
  /// for a GPU no cubin runs on. NVRTC compiles them in parallel.
  ExportedCode exportCode(const ir::Graph& g, const CompileOptions& options, CompileReport& report) const override {
    const auto start = std::chrono::steady_clock::now();
    const CudaModule m = emitGraph(g);
    std::vector<std::string> archs;
    if (options.arch.empty())
      archs.assign(std::begin(kExportArchs), std::end(kExportArchs));
    else
      archs.push_back(options.arch);
    std::vector<std::future<CompiledModule>> cubins;
    for (const std::string& arch : archs)
      cubins.push_back(std::async(std::launch::async, [&m, arch] { return compileModule(m.source, arch); }));
    const CompiledModule ptx = compileModule(m.source, archs.front(), Output::Ptx);
    ExportedCode code;
    code.files.emplace_back(kExportedSource, m.source);
    for (size_t i = 0; i < archs.size(); ++i) code.files.emplace_back(exportedCubin(archs[i]), cubins[i].get().binary);
    code.files.emplace_back(kExportedPtx, ptx.binary);
    code.target = {{"archs", fmt::format("{}", fmt::join(archs, " "))},
                   {"ptx", "compute_" + archs.front().substr(3)},
                   {"nvrtc", nvrtcVersion()},
                   {"matmul", options.matmul == MatmulImpl::CublasLt ? "cublaslt" : "generated"}};
    report.add(fmt::format("nvrtc: {} kernels for {} and PTX", m.kernels.size(), fmt::join(archs, ", ")),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return code;
  }
};

}  // namespace

const Backend& backend() {
  static const CudaBackend instance;
  return instance;
}

}  // namespace graphc::codegen::cuda
