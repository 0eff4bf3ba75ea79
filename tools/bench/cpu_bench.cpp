// graphc-cpu-bench: the cpu backend's benchmarks (Google Benchmark), timed
// in process on captured Executables (replay, so no allocation or shape
// work is timed), next to the floors they are judged against: the
// machine's measured copy bandwidth and the bare OpenBLAS sgemm.
// tools/bench/cpu_bench.py runs this and PyTorch on the same sizes in one
// run and prints the ratios (docs/performance.md).
//
//   build/bin/graphc-cpu-bench [--benchmark_filter=P1] [--benchmark_format=json]
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include "codegen/cpu/CpuExecutable.h"
#include "frontend/parser/Parser.h"
#include "passes/PassManager.h"
#include "runtime/Random.h"
#include "runtime/cpu/Eigh.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/reference/Interpreter.h"

namespace {

using namespace graphc;

/// A graph compiled for the cpu backend and captured on random inputs.
struct Compiled {
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<runtime::Executable> exe;
  std::vector<runtime::Tensor> inputs, outputs;
  int64_t bytesMoved = 0;  // inputs read + outputs written once: the floor's traffic

  Compiled(const std::string& text, const ir::SymbolBindings& sizes) {
    ir::DiagnosticEngine diags(ir::printToStderr());
    module = frontend::parseString(text, diags, "bench.graph");
    if (!module) throw std::runtime_error("bench graph does not parse");
    passes::PassManager pm;
    passes::addDefaultPipeline(pm);
    if (!pm.run(*module, diags)) throw std::runtime_error("pipeline failed");
    const ir::Graph& g = *module->entry();
    exe = codegen::cpu::compileGraph(g);
    for (const auto& p : g.body.params()) {
      ir::TensorType t = ir::substitute(p->type, sizes);
      inputs.push_back(
          runtime::randomTensor(t.dtype, runtime::concreteShape(t), 1 + static_cast<uint64_t>(p->index())));
      bytesMoved += static_cast<int64_t>(inputs.back().nbytes());
    }
    for (const ir::TensorType& r : g.resultTypes) {
      ir::TensorType t = ir::substitute(r, sizes);
      outputs.emplace_back(t.dtype, runtime::concreteShape(t));
      bytesMoved += static_cast<int64_t>(outputs.back().nbytes());
    }
    exe->capture(inputs, outputs);
  }
};

void runReplay(benchmark::State& state, Compiled& c) {
  c.exe->replay();  // warm: pages touched, caches primed
  for (auto _ : state) c.exe->replay();
  state.SetBytesProcessed(state.iterations() * c.bytesMoved);
  state.counters["bytes_moved"] = static_cast<double>(c.bytesMoved);
}

constexpr int64_t kPointwise = 16 * 1024 * 1024;

// Copy bandwidth: one read and one write of 256 MB, split over the pool as
// graphc's kernels are. The floor of a kernel is its bytes ÷ this rate.
void BM_CopyBandwidth(benchmark::State& state) {
  const size_t bytes = 256u << 20;
  std::vector<std::byte> src(bytes, std::byte{1}), dst(bytes);
  auto& pool = runtime::ThreadPool::global();
  auto copy = [&] {
    pool.parallelFor(static_cast<int64_t>(bytes), 1 << 20, [&](int64_t b, int64_t e, int) {
      std::memcpy(dst.data() + b, src.data() + b, static_cast<size_t>(e - b));
    });
  };
  copy();
  for (auto _ : state) copy();
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * bytes));
}
BENCHMARK(BM_CopyBandwidth)->Unit(benchmark::kMillisecond)->UseRealTime();

#if defined(__x86_64__)
/// `steps` rounds of FMAs on 12 independent accumulators of 16 floats
/// (more chains than the FMA latency times the ports needs), AVX-512 where
/// the CPU has it, else AVX2 on two 8-float halves each.
__attribute__((target("avx512f,fma"))) float fmaLoopAvx512(int64_t steps) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-3f);
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12  // the accumulators stay in registers
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  float sum = 0;
  for (int i = 0; i < 12; ++i) sum += _mm512_reduce_add_ps(acc[i]);
  return sum;
}
#endif

// The FMA peak: FLOP/s of FMAs alone (2 per lane), on every pool thread —
// what a compute-bound kernel's GFLOP/s is measured against (the GEMM's
// and the convolutions' share of it in docs/performance.md).
void BM_FmaPeak(benchmark::State& state) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512f")) {
    state.SkipWithError("no AVX-512 on this CPU");
    return;
  }
  auto& pool = runtime::ThreadPool::global();
  const int64_t steps = 1 << 20;
  std::vector<float> sink(static_cast<size_t>(pool.size()));
  auto run = [&] {
    pool.parallelFor(pool.size(), 1, [&](int64_t b, int64_t e, int) {
      for (int64_t t = b; t < e; ++t) sink[static_cast<size_t>(t)] = fmaLoopAvx512(steps);
    });
  };
  run();
  for (auto _ : state) run();
  benchmark::DoNotOptimize(sink.data());
  const double flops = 2.0 * 16 * 12 * static_cast<double>(steps) * pool.size();
  state.counters["GFLOP"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
#else
  state.SkipWithError("x86-64 only");
#endif
}
BENCHMARK(BM_FmaPeak)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_P1_Gelu(benchmark::State& state) {
  static Compiled c(R"(
graph @p1(%x: f32[N], %a: f32[N], %b: f32[N]) -> (f32[N]) {
  %m = mul(%x, %a)
  %s = add(%m, %b)
  %y = gelu(%s)
  return %y
})",
                    {{"N", kPointwise}});
  runReplay(state, c);
}
BENCHMARK(BM_P1_Gelu)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_P2_LinearRelu(benchmark::State& state) {
  static Compiled c(R"(
graph @p2(%x: f32[4096, 1024], %w: f32[1024, 1024], %b: f32[1024]) -> (f32[4096, 1024]) {
  %h = linear(%x, %w, %b)
  %y = relu(%h)
  return %y
})",
                    {});
  runReplay(state, c);
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * 4096 * 1024 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_P2_LinearRelu)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_P3_Softmax(benchmark::State& state) {
  static Compiled c(R"(
graph @p3(%x: f32[8192, 1024]) -> (f32[8192, 1024]) {
  %y = softmax(%x) {dim = -1}
  return %y
})",
                    {});
  runReplay(state, c);
}
BENCHMARK(BM_P3_Softmax)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_P3_LayerNorm(benchmark::State& state) {
  static Compiled c(R"(
graph @p3(%x: f32[8192, 1024], %w: f32[1024], %b: f32[1024]) -> (f32[8192, 1024]) {
  %y = layer_norm(%x, %w, %b)
  return %y
})",
                    {});
  runReplay(state, c);
}
BENCHMARK(BM_P3_LayerNorm)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_P4_Adagrad(benchmark::State& state) {
  static Compiled c(R"(
graph @p4(%p: f32[N], %s: f32[N], %g: f32[N]) -> (f32[N], f32[N]) {
  %gg = mul(%g, %g)
  %s2 = add(%s, %gg)
  %lrg = mul(%g, 0.01)
  %d = sqrt(%s2)
  %de = add(%d, 1e-10)
  %u = div(%lrg, %de)
  %p2 = sub(%p, %u)
  return %p2, %s2
})",
                    {{"N", kPointwise}});
  runReplay(state, c);
}
BENCHMARK(BM_P4_Adagrad)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Random symmetric f32 matrices [batch, n, n].
runtime::Tensor symmetricBatch(int64_t batch, int64_t n) {
  runtime::Tensor a = runtime::randomTensor(ir::DType::F32, {batch, n, n}, 5);
  float* p = a.as<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < i; ++j) p[(b * n + j) * n + i] = p[(b * n + i) * n + j];
  return a;
}

// P5: eigh through the compiled graph (the solver the backend picks by n).
void BM_P5_Eigh(benchmark::State& state) {
  const int64_t batch = state.range(0), n = state.range(1);
  Compiled c(fmt::format(R"(
graph @p5(%a: f32[{0}, {1}, {1}]) -> (f32[{0}, {1}], f32[{0}, {1}, {1}]) {{
  %w, %v = eigh(%a)
  return %w, %v
}})",
                         batch, n),
             {});
  runtime::Tensor a = symmetricBatch(batch, n);
  std::memcpy(c.inputs[0].data(), a.data(), a.nbytes());
  runReplay(state, c);
  state.counters["matrices_per_s"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_P5_Eigh)
    ->Args({10000, 8})
    ->Args({2000, 32})
    ->Args({100, 128})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The crossover: both solvers on 2000 matrices of each small n.
void eighSolver(benchmark::State& state, bool jacobi) {
  const int64_t batch = 2000, n = state.range(0);
  runtime::Tensor a = symmetricBatch(batch, n), w(ir::DType::F32, {batch, n}), v(ir::DType::F32, {batch, n, n});
  auto& pool = runtime::ThreadPool::global();
  openblas_set_num_threads(1);
  for (auto _ : state) {
    if (jacobi)
      runtime::cpu::eighJacobi(a, 'L', w, v, pool);
    else
      runtime::cpu::eighLapack(a, 'L', w, v, pool);
  }
  state.counters["matrices_per_s"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_EighJacobi(benchmark::State& state) { eighSolver(state, true); }
void BM_EighLapack(benchmark::State& state) { eighSolver(state, false); }
BENCHMARK(BM_EighJacobi)
    ->Arg(4)
    ->Arg(8)
    ->Arg(12)
    ->Arg(16)
    ->Arg(24)
    ->Arg(32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_EighLapack)
    ->Arg(4)
    ->Arg(8)
    ->Arg(12)
    ->Arg(16)
    ->Arg(24)
    ->Arg(32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The bare GEMM of P2 (x · wᵀ, no bias or relu) with OpenBLAS's own threads.
// Last: OpenBLAS's threads spin for a while after a call, which would slow
// whatever benchmark ran next.
void BM_P2_BareSgemm(benchmark::State& state) {
  const int m = 4096, n = 1024, k = 1024;
  runtime::Tensor x = runtime::randomTensor(ir::DType::F32, {m, k}, 1),
                  w = runtime::randomTensor(ir::DType::F32, {n, k}, 2);
  runtime::Tensor y(ir::DType::F32, {m, n});
  openblas_set_num_threads(runtime::ThreadPool::global().size());
  auto gemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x.as<float>(), k, w.as<float>(), k, 0.0f,
                y.as<float>(), n);
  };
  gemm();
  for (auto _ : state) gemm();
  openblas_set_num_threads(1);
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_P2_BareSgemm)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
