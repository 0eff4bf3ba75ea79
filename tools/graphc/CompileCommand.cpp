#include <cstdio>

#include "codegen/cpu/Jit.h"
#ifdef GRAPHC_HAS_CUDA
#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/Nvrtc.h"
#endif
#include "frontend/Parser.h"
#include "ir/Dot.h"
#include "ir/KernelIR.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "tools/graphc/Commands.h"

namespace graphc::tools {

namespace {
/// The device an --emit kind belongs to ("" for both).
std::string_view deviceOf(std::string_view emit) {
  if (emit == "llvm" || emit == "asm") return "cpu";
  if (emit == "cuda" || emit == "ptx") return "cuda";
  return "";
}
}  // namespace

int compileCommand(const CompileOptions& options) {
  const std::string_view needs = deviceOf(options.emit);
  if (!needs.empty() && needs != options.device) {
    std::fprintf(stderr, "graphc: error: --emit=%s is what the %.*s backend generates; use --device %.*s\n",
                 options.emit.c_str(), static_cast<int>(needs.size()), needs.data(), static_cast<int>(needs.size()),
                 needs.data());
    return 2;
  }
#ifndef GRAPHC_HAS_CUDA
  if (needs == "cuda") {
    std::fprintf(stderr, "graphc: error: --emit=%s needs the cuda backend, which this graphc was built without\n",
                 options.emit.c_str());
    return 1;
  }
#endif
  ir::DiagnosticEngine diags(ir::printToStderr());
  std::unique_ptr<ir::Module> module = loadModule(options.file, diags).module;
  if (!module) return 1;
  std::unique_ptr<DebugDump> dump;
  try {
    dump = openDump(options.dumpDir, *module);
    if (!runDefaultPipeline(*module, diags, options.timePasses, dump.get())) return 1;
    if (dump) {
      for (const auto& g : module->graphs) dump->kernels(*g, options.device);
      dump->finish();
      std::fprintf(stderr, "graphc: debug dump in %s\n", dump->path().c_str());
    }
  } catch (const ir::Error& e) {
    std::fprintf(stderr, "graphc: error: %s\n", e.what());
    return 1;
  }

  std::string out;
  if (options.emit == "dot") {
    for (const auto& g : module->graphs) out += ir::toDot(*g);
  } else if (options.emit == "graph") {
    out = ir::print(*module);
    for (const auto& g : module->graphs)
      if (g->memoryPlan) out += ir::describe(*g->memoryPlan);
  } else if (needs == "cpu") {
    for (const auto& g : module->graphs)
      for (const ir::Node* n : ir::kernel::fusedOps(g->body)) {
        try {
          const ir::kernel::Kernel k = ir::kernel::lower(*n);
          auto& jit = codegen::cpu::Jit::instance();
          out += options.emit == "llvm" ? jit.emitLLVM(k) : jit.emitAsm(k);
        } catch (const ir::Error& e) {
          diags.error(n->loc, e.what());
          return 1;
        }
      }
  } else if (needs == "cuda") {
#ifdef GRAPHC_HAS_CUDA
    // One module per graph, as compileGraph builds it; needs no device.
    try {
      for (const auto& g : module->graphs) {
        const codegen::cuda::CudaModule m = codegen::cuda::emitGraph(*g);
        if (options.emit == "cuda") {
          out += m.source;
        } else {
          const codegen::cuda::CompiledModule ptx = codegen::cuda::compileModule(
              m.source, options.arch.empty() ? "sm_90" : options.arch, codegen::cuda::Output::Ptx);
          out += ptx.binary;
          if (options.timePasses)
            std::fprintf(stderr, "cuda: %zu kernels, NVRTC %.3f s\n", m.kernels.size(), ptx.seconds);
        }
      }
    } catch (const ir::LocatedError& e) {
      diags.error(e.loc, e.what());
      return 1;
    } catch (const ir::Error& e) {
      std::fprintf(stderr, "graphc: error: %s\n", e.what());
      return 1;
    }
#endif
  } else {
    // The pipeline only forms kernels that lower; a fused op written in the
    // input may not, and is reported at its place.
    bool lowered = true;
    for (const auto& g : module->graphs)
      for (const ir::Node* n : ir::kernel::fusedOps(g->body)) {
        try {
          out += (out.empty() ? "" : "\n") + ir::kernel::print(ir::kernel::lower(*n));
        } catch (const ir::Error& e) {
          diags.error(n->loc, e.what());
          lowered = false;
        }
      }
    if (!lowered) return 1;
  }
  if (options.timePasses && options.device == "cpu") {  // compile every kernel, timing each
    codegen::cpu::CompileReport report;
    try {
      for (const auto& g : module->graphs) codegen::cpu::compileGraph(*g, &report);
    } catch (const ir::LocatedError& e) {
      diags.error(e.loc, e.what());
      return 1;
    } catch (const ir::Error& e) {
      std::fprintf(stderr, "graphc: error: %s\n", e.what());
      return 1;
    }
    std::fputs(kernelTimingTable(report).c_str(), stderr);
  }
  return writeOutput(options.output, out) ? 0 : 1;
}

}  // namespace graphc::tools
