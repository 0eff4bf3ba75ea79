// What `graphc run --device cpu` and `graphc compile` share: the default
// pipeline with --time-passes and debug dumps, and the kernel compile-time
// table.
#include <fmt/format.h>

#include "passes/PassManager.h"
#include "tools/graphc/Commands.h"

namespace graphc::tools {

bool runDefaultPipeline(ir::Module& m, ir::DiagnosticEngine& diags, bool timePasses, DebugDump* dump) {
  passes::PassManagerOptions options;
  options.timePasses = timePasses;
  passes::PassManager pm(options);
  passes::addDefaultPipeline(pm);
  if (dump) pm.afterPass = [dump](const passes::Pass& p, const ir::Module& after, bool) { dump->afterPass(p.name(), after); };
  return pm.run(m, diags);
}

std::unique_ptr<DebugDump> openDump(const std::string& dir, const ir::Module& m) {
  auto dump = DebugDump::open(DebugDump::rootFor(dir), m.entry()->name);
  if (dump) dump->captured(m);
  return dump;
}

std::string kernelTimingTable(const codegen::cpu::CompileReport& report) {
  std::string table = "// ----- kernel compile time (LLVM O3 + JIT, wall clock) -----\n";
  double total = 0;
  for (const auto& k : report.kernels) {
    table += fmt::format("//   {:<28} {:>10.3f} ms{}\n", k.kernel, k.seconds * 1e3, k.fromCache ? "  (cached)" : "");
    total += k.seconds * 1e3;
  }
  table += fmt::format("//   {:<28} {:>10.3f} ms\n", "sum", total);
  table += fmt::format("//   {:<28} {:>10.3f} ms\n", "wall (parallel)", report.wallSeconds * 1e3);
  return table;
}

}  // namespace graphc::tools
