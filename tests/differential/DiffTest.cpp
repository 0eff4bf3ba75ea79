#include "DiffTest.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "KernelEval.h"
#include "codegen/cpu/CpuExecutable.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "frontend/parser/Parser.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"
#include "tests/support/Tolerance.h"

namespace graphc::difftest {

namespace {

std::string diagnostics(ir::DiagnosticEngine& diags) {
  std::string out;
  for (const auto& d : diags.all()) out += ir::format(d);
  return out;
}

using testing::isClose;
using testing::Tolerance;

/// torch's default tolerances, for the graph's outputs.
Tolerance outputTolerance(bool f32) { return testing::defaultTolerance(f32 ? ir::DType::F32 : ir::DType::F64); }

/// For a kernel's IR against its body. The kernel IR rounds the GEMM
/// accumulator to the dtype before its epilogue adds the bias, as every
/// backend does, where the body's linear rounds once; in f32, an exp or cos
/// of a large epilogue value turns that one rounding into 4e-6 relative or
/// 2e-5 absolute (seen: seeds 430 and 112665 of --f32). What this check is
/// for, index maps reading the wrong element, gives errors of order one.
Tolerance kernelTolerance(bool f32) { return f32 ? Tolerance{2e-3, 2e-4} : outputTolerance(false); }

/// For the cpu backend against the reference: torch's in f64. In f32 the
/// backend computes each op in f32 (libmvec's exp, f32 GEMM accumulation)
/// where the reference computes in f64 and rounds, the difference the
/// kernel IR's own tolerance allows for.
Tolerance cpuTolerance(bool f32) { return f32 ? kernelTolerance(true) : outputTolerance(false); }

}  // namespace

std::optional<std::string> checkSeed(uint64_t seed, const RandomGraphOptions& options) {
  const std::string text = randomGraph(seed, options);
  auto fail = [&](const std::string& why) { return fmt::format("seed {}: {}\n{}", seed, why, text); };
  ir::DiagnosticEngine diags;
  auto original = frontend::parseString(text, diags, fmt::format("random-{}.graph", seed));
  if (!original) return fail("the generated graph does not parse:\n" + diagnostics(diags));
  auto optimised = ir::clone(*original);  // the pipeline starts from the graph as written
  // The oracle: the graph as written, for f64. For f32, the graph after
  // decompose alone: the reference computes a composite op (layer_norm,
  // softmax) in f64 and rounds once, its decomposition rounds at every
  // primitive, and layer_norm then amplifies that rounding on nearly
  // constant rows; what decompose computes is checked in the f64 runs and
  // per op against torch in f32 (tests/golden). Every other pass must keep
  // f32 results to torch's f32 tolerance.
  if (options.useF32) {
    passes::PassManager decomposeOnly;
    if (!passes::addPipeline(decomposeOnly, "decompose", diags) || !decomposeOnly.run(*original, diags))
      return fail("decompose alone failed:\n" + diagnostics(diags));
  }
  const ir::Graph& g = *original->entry();
  std::vector<runtime::Tensor> inputs;
  for (const auto& p : g.body.params())
    inputs.push_back(runtime::randomTensor(p->type.dtype, runtime::concreteShape(p->type), seed + p->index()));

  passes::PassManagerOptions pmOptions;
  pmOptions.checkChangedFlag = true;  // every pass's "changed" must be honest
  passes::PassManager pm(pmOptions);
  passes::addDefaultPipeline(pm);
  if (!pm.run(*optimised, diags)) return fail("the default pipeline failed:\n" + diagnostics(diags));
  const std::string dump = ir::print(*optimised);
  auto reparsed = frontend::parseString(dump, diags, "optimised.graph");
  if (!reparsed || ir::print(*reparsed) != dump) return fail("the optimised graph does not round-trip:\n" + dump);

  // Every kernel the pipeline formed must lower to the kernel IR.
  for (const ir::Node* n : codegen::kernel::fusedOps(optimised->entry()->body)) {
    try {
      codegen::kernel::lower(*n);
    } catch (const ir::Error& e) {
      return fail(std::string("kernel lowering failed: ") + e.what() + "\n" + dump);
    }
  }

  // Every kernel, evaluated from its kernel IR, must give what the
  // reference computes for its fused op's body.
  std::string kernelMismatch;
  const ir::SymbolBindings sizes = runtime::bindInputs(g, inputs);
  auto checkKernel = [&](const ir::Node& n, const std::vector<runtime::Tensor>& operands,
                         const std::vector<runtime::Tensor>& results) {
    if (n.op != ir::OpId::Fused || !kernelMismatch.empty()) return;
    std::vector<runtime::Tensor> fromIR = evaluateKernel(codegen::kernel::lower(n), operands, sizes);
    for (size_t k = 0; k < results.size(); ++k)
      for (int64_t i = 0; i < results[k].numel(); ++i)
        if (!isClose(fromIR[k].getDouble(i), results[k].getDouble(i), kernelTolerance(options.useF32))) {
          kernelMismatch = fmt::format("kernel {} output {} element {}: {} from the kernel IR, {} from its body\n{}",
                                       n.attrs.find("name")->s, k, i, fromIR[k].getDouble(i), results[k].getDouble(i),
                                       codegen::kernel::print(codegen::kernel::lower(n)));
          return;
        }
  };
  std::vector<runtime::Tensor> want, got;
  try {
    want = runtime::interpret(g, inputs);
    got = runtime::interpret(*reparsed->entry(), inputs, checkKernel);
  } catch (const ir::Error& e) {
    return fail(std::string("interpretation failed: ") + e.what() + "\n" + dump);
  }
  if (!kernelMismatch.empty()) return fail(kernelMismatch + dump);
  for (size_t k = 0; k < want.size(); ++k) {
    if (got[k].shape() != want[k].shape() || got[k].dtype() != want[k].dtype())
      return fail(fmt::format("output {} is {} after the pipeline, {} before", k, ir::toString(got[k].type()),
                              ir::toString(want[k].type())));
    for (int64_t i = 0; i < want[k].numel(); ++i)
      if (!isClose(got[k].getDouble(i), want[k].getDouble(i), outputTolerance(options.useF32)))
        return fail(fmt::format("output {} element {}: {} after the pipeline, {} before\n{}", k, i, got[k].getDouble(i),
                                want[k].getDouble(i), dump));
  }
  if (options.cpuBackend) {
    try {
      const ir::Graph& entry = *optimised->entry();
      auto executable = codegen::cpu::compileGraph(entry);
      // The run writes the inputs that results update: it gets copies.
      std::vector<runtime::Tensor> bound;
      for (const runtime::Tensor& in : inputs) {
        bound.emplace_back(in.dtype(), in.shape());
        if (in.nbytes()) std::memcpy(bound.back().data(), in.data(), in.nbytes());
      }
      std::vector<runtime::Tensor> outputs;
      for (size_t k = 0; k < want.size(); ++k) {
        if (const ir::Value* p = entry.updatedParam(k)) {
          outputs.push_back(bound[static_cast<size_t>(p->index())]);
          continue;
        }
        outputs.emplace_back(want[k].dtype(), want[k].shape());
        outputs.back().fillBytes(0xff);  // poison: NaN, -1
      }
      executable->capture(bound, outputs);
      executable->replay();
      for (size_t k = 0; k < want.size(); ++k)
        for (int64_t i = 0; i < want[k].numel(); ++i)
          if (!isClose(outputs[k].getDouble(i), want[k].getDouble(i), cpuTolerance(options.useF32)))
            return fail(fmt::format("output {} element {}: {} on the cpu backend, {} on the reference\n{}", k, i,
                                    outputs[k].getDouble(i), want[k].getDouble(i), dump));
      for (size_t i = 0; i < inputs.size(); ++i)
        if (entry.updatingResult(entry.body.param(i)) < 0 &&
            (inputs[i].nbytes() && std::memcmp(bound[i].data(), inputs[i].data(), inputs[i].nbytes()) != 0))
          return fail(fmt::format("input {} is not updated in place, but the cpu backend changed it\n{}", i, dump));
    } catch (const ir::Error& e) {
      return fail(std::string("cpu backend failed: ") + e.what() + "\n" + dump);
    }
  }
  return std::nullopt;
}

}  // namespace graphc::difftest
