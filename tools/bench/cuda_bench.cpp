// graphc-cuda-bench: the cuda backend's benchmarks, for tools/gpu_check.sh.
// Every case is compiled, captured once and timed on the device with CUDA
// events over back-to-back launches of its captured steps (no host copies),
// against the floors and peers of issue 5:
//
//   copy        cudaMemcpy device→device of 256 MiB: the bandwidth floor
//   pointwise   gelu(x·a + b), 16M f32            vs the copy bandwidth
//   softmax / layer_norm 8192×1024 f32            vs the copy bandwidth
//   GEMM + bias + relu 4096³, f32 and bf16        generated vs cuBLASLt
//   eigh 10000×8×8, 2000×32×32, 500×100×100 f32   ms (PyTorch's are timed by gpu_check.sh)
//   a 20-kernel graph at 64×64                    replayed graph vs step by step
//
// Prints one line per case, "name<TAB>ms<TAB>metric<TAB>ratio", then exits 0.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "frontend/parser/Parser.h"
#include "passes/PassManager.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"

namespace {

using namespace graphc;

struct Compiled {
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<runtime::Executable> exe;
  std::vector<runtime::Tensor> inputs, outputs;
};

Compiled compile(const std::string& text, codegen::MatmulImpl matmul = codegen::MatmulImpl::Generated) {
  Compiled c;
  ir::DiagnosticEngine diags(ir::printToStderr());
  c.module = frontend::parseString(text, diags, "bench.graph");
  if (!c.module) throw ir::Error("bench graph does not parse");
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  if (!pm.run(*c.module, diags)) throw ir::Error("bench graph does not compile");
  const ir::Graph& g = *c.module->entry();
  codegen::CompileOptions options;
  options.matmul = matmul;
  c.exe = codegen::cuda::compileGraph(g, options);
  for (const auto& p : g.body.params())
    c.inputs.push_back(
        runtime::randomTensor(p->type.dtype, runtime::concreteShape(p->type), 1 + static_cast<uint64_t>(p->index())));
  const ir::SymbolBindings sizes = runtime::bindInputs(g, c.inputs);
  for (const ir::TensorType& t : g.resultTypes)
    c.outputs.emplace_back(t.dtype, runtime::concreteShape(ir::substitute(t, sizes)));
  c.exe->capture(c.inputs, c.outputs);
  return c;
}

double timeGraph(Compiled& c, int iterations) { return codegen::cuda::timeCapturedSteps(*c.exe, iterations, true); }

double copyBandwidth() {
  const size_t bytes = size_t{256} << 20;
  void *a = nullptr, *b = nullptr;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  for (int i = 0; i < 20; ++i) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes * 20 / (ms * 1e-3) / 1e9;  // read + write, GB/s
}

void row(const std::string& name, double ms, const std::string& metric, const std::string& ratio) {
  std::printf("%s\t%.4f\t%s\t%s\n", name.c_str(), ms, metric.c_str(), ratio.c_str());
  std::fflush(stdout);
}

}  // namespace

int main() {
  try {
    const auto& dev = codegen::cuda::device();
    std::printf("# %s (%s, %d SMs)\n", dev.name.c_str(), dev.arch().c_str(), dev.multiprocessors);
    const double floor = copyBandwidth();
    row("copy 256MiB d2d", 0, fmt::format("{:.0f} GB/s", floor), "1.00 (floor)");

    auto bandwidthCase = [&](const std::string& name, const std::string& text, double bytes) {
      Compiled c = compile(text);
      const double ms = timeGraph(c, 50);
      const double gbs = bytes / (ms * 1e-3) / 1e9;
      row(name, ms, fmt::format("{:.0f} GB/s", gbs), fmt::format("{:.2f} of copy", gbs / floor));
    };
    const double n16 = 16.0 * 1024 * 1024;
    bandwidthCase("pointwise gelu(x*a+b) 16M f32",
                  "graph @p(%x: f32[16384, 1024], %a: f32[16384, 1024], %b: f32[16384, 1024]) -> f32[16384, 1024] {\n"
                  "  %m = mul(%x, %a)\n  %s = add(%m, %b)\n  %g = gelu(%s)\n  return %g\n}\n",
                  4 * n16 * 4);
    bandwidthCase("softmax 8192x1024 f32",
                  "graph @s(%x: f32[8192, 1024]) -> f32[8192, 1024] {\n  %y = softmax(%x) {dim = -1}\n  return %y\n}\n",
                  2 * 8192.0 * 1024 * 4);
    bandwidthCase("layer_norm 8192x1024 f32",
                  "graph @l(%x: f32[8192, 1024], %w: f32[1024], %b: f32[1024]) -> f32[8192, 1024] {\n"
                  "  %y = layer_norm(%x, %w, %b)\n  return %y\n}\n",
                  2 * 8192.0 * 1024 * 4);

    for (const char* dt : {"f32", "bf16"}) {
      const std::string text = fmt::format(
          "graph @g(%x: {0}[4096, 4096], %w: {0}[4096, 4096], %b: {0}[4096]) -> {0}[4096, 4096] {{\n"
          "  %y = linear(%x, %w, %b)\n  %r = relu(%y)\n  return %r\n}}\n",
          dt);
      Compiled generated = compile(text);
      Compiled lt = compile(text, codegen::MatmulImpl::CublasLt);
      const double g = timeGraph(generated, 10), l = timeGraph(lt, 10);
      const double flops = 2.0 * 4096 * 4096 * 4096;
      row(fmt::format("gemm+bias+relu 4096^3 {} generated", dt), g,
          fmt::format("{:.1f} TFLOP/s", flops / (g * 1e-3) / 1e12), fmt::format("{:.2f} of cuBLASLt", l / g));
      row(fmt::format("gemm+bias+relu 4096^3 {} cublaslt", dt), l,
          fmt::format("{:.1f} TFLOP/s", flops / (l * 1e-3) / 1e12), "1.00");
    }

    for (auto [batch, n] : std::vector<std::pair<int, int>>{{10000, 8}, {2000, 32}, {500, 100}}) {
      const std::string text = fmt::format(
          "graph @e(%a: f32[{0}, {1}, {1}]) -> (f32[{0}, {1}], f32[{0}, {1}, {1}]) {{\n  %w, %v = eigh(%a)\n  return "
          "%w, %v\n}}\n",
          batch, n);
      Compiled c = compile(text);
      row(fmt::format("eigh {}x{}x{} f32", batch, n, n), timeGraph(c, 5), "-", "see torch");
    }

    std::string chain = "graph @c(%x: f32[64, 64]) -> f32[64, 64] {\n  %t0 = exp(%x)\n";
    for (int k = 1; k < 20; ++k) {
      // Each step ends in a reduction, so the 20 steps stay 20 kernels.
      chain +=
          fmt::format("  %m{0} = amax(%t{1}) {{dims = [1], keepdim = true}}\n  %t{0} = sub(%t{1}, %m{0})\n", k, k - 1);
    }
    chain += "  return %t19\n}\n";
    Compiled c = compile(chain);
    const double graph = codegen::cuda::timeCapturedSteps(*c.exe, 200, true);
    const double steps = codegen::cuda::timeCapturedSteps(*c.exe, 200, false);
    const std::string steps_ = c.exe->describe();
    row(fmt::format("{}-step graph 64x64 replay", std::count(steps_.begin(), steps_.end(), '\n')), graph, "-",
        fmt::format("{:.2f}x faster than step by step ({:.4f} ms)", steps / graph, steps));
  } catch (const ir::Error& e) {
    std::fprintf(stderr, "graphc-cuda-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
