// compileGraph: the graph's module emitted, compiled by NVRTC for the
// device's architecture (or options.arch), and made an Executable — the
// NVRTC half of the cuda backend (CudaExecutable.cpp runs what it made).
#include <fmt/format.h>

#include "codegen/StepPlan.h"
#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "codegen/cuda/Nvrtc.h"

namespace graphc::codegen::cuda {

std::unique_ptr<runtime::Executable> compileGraph(const ir::Graph& g, const CompileOptions& options,
                                                  CompileReport* report) {
  const DeviceInfo& dev = device();
  const codegen::LoweredKernels lowered = codegen::lowerKernels(g);
  CudaModule source = emitLowered(g, lowered);
  const std::string arch = options.arch.empty() ? dev.arch() : options.arch;
  const CompiledModule cubin = compileModule(source.source, arch);
  if (report) {
    report->add(fmt::format("nvrtc: {} kernels for {} in one module, cubin from {}", source.kernels.size(), arch,
                            cubin.from == CompiledModule::From::Nvrtc    ? "nvrtc"
                            : cubin.from == CompiledModule::From::Memory ? "memory"
                                                                         : "disk"),
                cubin.seconds, /*detail=*/true);
  }
  return makeExecutable(g, lowered, std::move(source), cubin.binary, options.matmul);
}

}  // namespace graphc::codegen::cuda
