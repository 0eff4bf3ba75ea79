// libFuzzer target for the .graph front end. For any bytes it checks that:
//  - parsing never crashes, hangs or trips a sanitizer (errors are fine);
//  - a graph that parses prints to text that re-parses and prints the same;
//  - the default pipeline keeps the graph valid and round-trippable;
//  - every kernel it formed lowers to the kernel IR (a `fused` op written in
//    the input may be refused with an ir::Error);
//  - small, fully static graphs run on the reference interpreter without
//    crashing (ir::Error for bad runs is fine).
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "frontend/Parser.h"
#include "ir/KernelIR.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/Interpreter.h"
#include "runtime/Random.h"

namespace {

using namespace graphc;

constexpr int64_t kMaxElements = 1 << 12;  // keeps each run fast

[[noreturn]] void die(const char* what, const std::string& text) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n%s\n", what, text.c_str());
  std::abort();
}

bool smallAndStatic(const ir::Region& r) {
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
bool lowersAll(const ir::Region& r) {
  for (const ir::Node* n : ir::kernel::fusedOps(r)) {
    try {
      ir::kernel::print(ir::kernel::lower(*n));
    } catch (const ir::Error&) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::DiagnosticEngine diags;
  auto m = frontend::parseString(std::string(reinterpret_cast<const char*>(data), size), diags, "fuzz.graph");
  if (!m) {
    if (!diags.hadError()) die("parse failed without a diagnostic", "");
    return 0;
  }
  const std::string printed = ir::print(*m);
  ir::DiagnosticEngine again;
  auto reparsed = frontend::parseString(printed, again, "printed.graph");
  if (!reparsed) die("printed graph does not re-parse", printed);
  if (ir::print(*reparsed) != printed) die("printed graph does not print identically", printed);

  bool inputHasKernels = false;
  for (const auto& g : m->graphs) inputHasKernels |= !ir::kernel::fusedOps(g->body).empty();
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  if (!pm.run(*m, diags)) die("default pipeline failed on a valid graph", printed);
  const std::string optimised = ir::print(*m);
  ir::DiagnosticEngine third;
  auto reoptimised = frontend::parseString(optimised, third, "optimised.graph");
  if (!reoptimised || ir::print(*reoptimised) != optimised) die("optimised graph does not round-trip", optimised);
  for (const auto& g : m->graphs)
    if (!lowersAll(g->body) && !inputHasKernels) die("a kernel the pipeline formed does not lower", optimised);

  const ir::Graph& g = *m->entry();
  if (!smallAndStatic(g.body)) return 0;
  std::vector<runtime::Tensor> inputs;
  for (const auto& p : g.body.params())
    inputs.push_back(runtime::randomTensor(p->type.dtype, runtime::concreteShape(p->type), 1));
  try {
    runtime::interpret(g, inputs);
  } catch (const ir::Error&) {
  }
  return 0;
}
