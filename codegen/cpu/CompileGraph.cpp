// compileGraph: the cpu backend's compile of a fused graph — the step plan,
// every kernel it runs lowered and JIT-compiled (in parallel), then the
// Executable over them (CpuExecutable.cpp, which needs no LLVM).
#include <fmt/format.h>

#include "codegen/StepPlan.h"
#include "codegen/cpu/CpuExecutable.h"
#include "codegen/cpu/Jit.h"
#include "ir/Diagnostics.h"
#include "runtime/cpu/ThreadPool.h"

namespace graphc::codegen::cpu {

namespace {

/// How the compile report marks a kernel that was not compiled afresh.
std::string_view fromText(CompiledKernel::From from) {
  switch (from) {
    case CompiledKernel::From::Compiled: return "";
    case CompiledKernel::From::Memory: return " (cached)";
    case CompiledKernel::From::Disk: return " (disk cache)";
    case CompiledKernel::From::Package: return " (package)";
  }
  return "";
}

/// Compiles the kernels of `lowered` the plan runs up front, in parallel
/// on the thread pool (each kernel's compile is independent); the result is
/// indexed like StepPlan::kernel, null for a kernel no step runs. A set
/// `cancel` stops it before the next kernel.
std::vector<std::shared_ptr<const CompiledKernel>> compileKernels(const codegen::LoweredKernels& lowered,
                                                                  const std::vector<bool>& run, CompileReport* report,
                                                                  const std::atomic<bool>* cancel) {
  std::vector<std::shared_ptr<const CompiledKernel>> compiled(lowered.kernels.size());
  runtime::ThreadPool::global().parallelFor(
      static_cast<int64_t>(compiled.size()), 1, [&](int64_t begin, int64_t end, int) {
        for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
          if (!run[i]) continue;
          runtime::checkCompileCancelled(cancel);
          try {
            compiled[i] = Jit::instance().compile(*lowered.kernels[i]);
          } catch (const ir::Error& e) {
            throw ir::LocatedError(lowered.fused[i]->loc, e.what());
          }
        }
      });
  if (report)
    for (size_t i = 0; i < compiled.size(); ++i)
      if (compiled[i])
        report->add(fmt::format("kernel {}{}", lowered.kernels[i]->name, fromText(compiled[i]->from)),
                    compiled[i]->compileSeconds, /*detail=*/true);
  return compiled;
}

}  // namespace

std::unique_ptr<runtime::Executable> compileGraph(const ir::Graph& g, CompileReport* report,
                                                  const std::atomic<bool>* cancel) {
  const codegen::LoweredKernels lowered = codegen::lowerKernels(g, cpuLowerOptions());
  auto plan = codegen::planGraph(g, lowered.kernels, lowered.position);
  auto kernels = compileKernels(lowered, codegen::kernelsRun(*plan, lowered.kernels.size()), report, cancel);
  return makeExecutable(g, std::move(plan), std::move(kernels));
}

}  // namespace graphc::codegen::cpu
