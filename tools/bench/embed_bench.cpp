// graphc-embed-bench: what compiled(fn) costs per call on top of the run
// itself, for a small MLP (batch 1, where the overhead matters most) on
// the cpu backend. One run prints the three timings and the ratio of the
// guard check to the run.
//
//   build/bin/graphc-embed-bench [--benchmark_filter=Guard]
#include <cstdio>
#include <map>

#include <benchmark/benchmark.h>

#include "frontend/api/graphc.h"
#include "runtime/Random.h"

namespace {

using namespace graphc;

TracedTensor mlp(TracedTensor x, TracedTensor w1, TracedTensor b1, TracedTensor w2, TracedTensor b2) {
  return softmax(linear(relu(linear(x, w1, b1)), w2, b2), -1);
}

std::vector<Tensor> inputs() {
  return {runtime::randomTensor(DType::F32, {1, 16}, 1), runtime::randomTensor(DType::F32, {32, 16}, 2),
          runtime::randomTensor(DType::F32, {32}, 3), runtime::randomTensor(DType::F32, {4, 32}, 4),
          runtime::randomTensor(DType::F32, {4}, 5)};
}

/// Checking the guards of the cached entry (what every call does first).
void BM_GuardCheck(benchmark::State& state) {
  CompiledFunction f = compiled(mlp, {.name = "mlp"});
  std::vector<Tensor> in = inputs();
  f(in);
  for (auto _ : state) benchmark::DoNotOptimize(f.checkGuards(in));
}

/// A call of compiled(mlp): guard check, cache hit, run.
void BM_CompiledCall(benchmark::State& state) {
  CompiledFunction f = compiled(mlp, {.name = "mlp"});
  std::vector<Tensor> in = inputs();
  f(in);
  for (auto _ : state) benchmark::DoNotOptimize(f(in));
}

/// The Executable's run alone (input checks, output allocation, kernels).
void BM_ExecutableRun(benchmark::State& state) {
  Executable exe = compile(trace(
      mlp,
      {{DType::F32, {1, 16}}, {DType::F32, {32, 16}}, {DType::F32, {32}}, {DType::F32, {4, 32}}, {DType::F32, {4}}}));
  std::vector<Tensor> in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize(exe.run(in));
}

BENCHMARK(BM_GuardCheck);
BENCHMARK(BM_CompiledCall);
BENCHMARK(BM_ExecutableRun);

/// Keeps each benchmark's mean time per iteration for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) times[r.benchmark_name()] = r.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> times;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto& t = reporter.times;
  if (t.count("BM_GuardCheck") && t.count("BM_ExecutableRun") && t.count("BM_CompiledCall"))
    std::printf("\nguard check = %.2f%% of the run; a compiled(fn) call costs %.2fx the bare run\n",
                100.0 * t.at("BM_GuardCheck") / t.at("BM_ExecutableRun"),
                t.at("BM_CompiledCall") / t.at("BM_ExecutableRun"));
  benchmark::Shutdown();
  return 0;
}
