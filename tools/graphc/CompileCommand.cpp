#include <cstdio>

#include "frontend/Parser.h"
#include "ir/KernelIR.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "tools/graphc/Commands.h"

namespace graphc::tools {

int compileCommand(const CompileOptions& options) {
  if (options.emit != "graph" && options.emit != "kernels") {
    std::fprintf(stderr, "graphc: error: --emit=%s needs the %s backend, which is not built yet (--emit=graph and "
                 "--emit=kernels work now)\n", options.emit.c_str(), options.device.c_str());
    return 1;
  }
  ir::DiagnosticEngine diags(ir::printToStderr());
  auto module = frontend::parseFile(options.file, diags);
  if (!module) return 1;
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  if (!pm.run(*module, diags)) return 1;

  std::string out;
  if (options.emit == "graph") {
    out = ir::print(*module);
    for (const auto& g : module->graphs)
      if (g->memoryPlan) out += ir::describe(*g->memoryPlan);
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
  return writeOutput(options.output, out) ? 0 : 1;
}

}  // namespace graphc::tools
