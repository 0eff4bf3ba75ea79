// What both fuzz targets check of a module their front end accepted:
//  - it prints to text that re-parses and prints the same;
//  - the default pipeline keeps it valid and round-trippable;
//  - every kernel the pipeline formed lowers to the kernel IR (a `fused` op
//    written in the input may be refused with an ir::Error);
//  - a small, fully static graph runs on the reference interpreter without
//    crashing (ir::Error for a bad run is fine).
// A broken invariant aborts with the graph, which libFuzzer saves.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "frontend/parser/Parser.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"

namespace graphc::fuzz {

inline constexpr int64_t kMaxElements = 1 << 12;  // keeps each run fast

[[noreturn]] inline void die(const char* what, const std::string& text) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n%s\n", what, text.c_str());
  std::abort();
}

inline bool smallAndStatic(const ir::Region& r) {
  for (const auto& p : r.params()) {
    auto n = p->type.staticNumElements();
    if (!n || *n > kMaxElements) return false;
  }
  for (const auto& node : r.nodes()) {
    for (const auto& v : node->results()) {
      auto n = v->type.staticNumElements();
      if (!n || *n > kMaxElements) return false;
    }
    if (node->op == ir::OpId::Matmul || node->op == ir::OpId::Linear || node->op == ir::OpId::Eigh)
      for (const ir::Value* v : node->operands)
        if (v->type.rank() > 0 && v->type.shape.back().size > 64) return false;
    for (const auto& region : node->regions())
      if (!smallAndStatic(*region)) return false;
  }
  return true;
}

/// Lowers every fused op; false when one is refused.
inline bool lowersAll(const ir::Region& r) {
  for (const ir::Node* n : codegen::kernel::fusedOps(r)) {
    try {
      codegen::kernel::print(codegen::kernel::lower(*n));
    } catch (const ir::Error&) {
      return false;
    }
  }
  return true;
}

/// The checks above, on a module the front end accepted.
inline void checkModule(ir::Module& m) {
  const std::string printed = ir::print(m);
  ir::DiagnosticEngine again;
  auto reparsed = frontend::parseString(printed, again, "printed.graph");
  if (!reparsed) die("printed graph does not re-parse", printed);
  if (ir::print(*reparsed) != printed) die("printed graph does not print identically", printed);

  bool inputHasKernels = false;
  for (const auto& g : m.graphs) inputHasKernels |= !codegen::kernel::fusedOps(g->body).empty();
  ir::DiagnosticEngine diags;
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  if (!pm.run(m, diags)) die("default pipeline failed on a valid graph", printed);
  const std::string optimised = ir::print(m);
  ir::DiagnosticEngine third;
  auto reoptimised = frontend::parseString(optimised, third, "optimised.graph");
  if (!reoptimised || ir::print(*reoptimised) != optimised) die("optimised graph does not round-trip", optimised);
  for (const auto& g : m.graphs)
    if (!lowersAll(g->body) && !inputHasKernels) die("a kernel the pipeline formed does not lower", optimised);

  const ir::Graph& g = *m.entry();
  if (!smallAndStatic(g.body)) return;
  std::vector<runtime::Tensor> inputs;
  for (const auto& p : g.body.params())
    inputs.push_back(runtime::randomTensor(p->type.dtype, runtime::concreteShape(p->type), 1));
  try {
    runtime::interpret(g, inputs);
  } catch (const ir::Error&) {
  }
}

}  // namespace graphc::fuzz
