// The NVRTC check of the conformance runner: where no GPU can run the cuda
// backend, its kernels for every test are still generated and compiled, as
// CI does for the project's own graphs (tests/cuda/CudaCodegenTest.cpp).
#include <fmt/format.h>

#include "codegen/cuda/CudaEmitter.h"
#include "codegen/cuda/Nvrtc.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "frontend/api/Api.h"
#include "tools/onnx/Conformance.h"

namespace graphc::onnxtest {

namespace {

/// Tests per NVRTC module: NVRTC's start-up is most of a small module's time.
constexpr size_t kTestsPerModule = 60;

struct Lowered {
  std::vector<codegen::kernel::Kernel> kernels;
  bool conditions = false, transpose = false;
};

/// The test's kernels, renamed apart from other tests' (t<index>_k0_...).
Lowered lowerTest(const Graph& g, size_t index) {
  Lowered out;
  for (const ir::Node* f : codegen::kernel::fusedOps(g.entry().body)) {
    out.kernels.push_back(codegen::kernel::lower(*f));
    out.kernels.back().name = fmt::format("t{}_{}", index, out.kernels.back().name);
  }
  out.conditions = ir::containsOp(g.entry().body, ir::OpId::Cond);
  out.transpose = ir::containsOp(g.entry().body, ir::OpId::Eigh);
  return out;
}

/// Emits and compiles the tests' kernels as one module for each
/// architecture; "" when it compiles, else the first error line.
std::string compileTogether(const std::vector<Lowered>& tests) {
  std::vector<const codegen::kernel::Kernel*> kernels;
  codegen::cuda::EmitOptions emit;
  for (const Lowered& t : tests) {
    for (const auto& k : t.kernels) kernels.push_back(&k);
    emit.conditions |= t.conditions;
    emit.transpose |= t.transpose;
  }
  try {
    const codegen::cuda::CudaModule module = codegen::cuda::emitModule(kernels, emit);
    for (const char* arch : {"sm_80", "sm_90"}) codegen::cuda::compileModule(module.source, arch);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
  return "";
}

}  // namespace

void compileWithNvrtc(std::vector<TestResult>& results) {
  std::vector<size_t> batch;
  std::vector<Lowered> lowered;
  auto flush = [&] {
    if (batch.empty()) return;
    if (compileTogether(lowered).empty()) {
      for (size_t i : batch) results[i].failures[Backend::Nvrtc] = "";
    } else {  // find which tests fail
      for (size_t k = 0; k < batch.size(); ++k)
        results[batch[k]].failures[Backend::Nvrtc] = compileTogether({lowered[k]});
    }
    batch.clear();
    lowered.clear();
  };
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].optimized) continue;
    try {
      lowered.push_back(lowerTest(*std::static_pointer_cast<const Graph>(results[i].optimized), i));
      batch.push_back(i);
    } catch (const std::exception& e) {
      results[i].failures[Backend::Nvrtc] = e.what();
    }
    if (batch.size() == kTestsPerModule) flush();
  }
  flush();
}

}  // namespace graphc::onnxtest
