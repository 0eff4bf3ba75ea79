// Embedding graphc: an MLP traced, compiled and run; a model with a
// data-dependent branch (cond); compiled(fn) recompiling for a new static
// size and not for a dynamic one. Each result is checked against graphc's
// reference interpreter; the program exits 1 if one does not match.
//
//   embed [cpu|cuda|reference]     (default cpu)
#include <cmath>
#include <cstdio>
#include <graphc/graphc.h>
#include <string>
#include <vector>

using graphc::DType;
using graphc::Tensor;
using graphc::TracedTensor;

namespace {

/// A deterministic f32 tensor with values in [-0.5, 0.5].
Tensor filled(std::vector<int64_t> shape, int seed) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.setDouble(i, 0.5 * std::sin(0.37 * static_cast<double>(i) + seed));
  return t;
}

/// torch.testing's f32 tolerances: |a - b| <= 1e-5 + 1.3e-6 |b|.
bool close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double* worst) {
  *worst = 0;
  if (got.size() != want.size()) return false;
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k].shape() != want[k].shape()) return false;
    for (int64_t i = 0; i < got[k].numel(); ++i) {
      double a = got[k].getDouble(i), b = want[k].getDouble(i);
      *worst = std::max(*worst, std::abs(a - b));
      if (!(std::abs(a - b) <= 1e-5 + 1.3e-6 * std::abs(b))) return false;
    }
  }
  return true;
}

bool check(const char* what, const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  double worst = 0;
  bool ok = close(got, want, &worst);
  std::printf("%-34s %s (max |diff| vs reference %.3g)\n", what, ok ? "matches" : "DIFFERS", worst);
  return ok;
}

// The models, written over traced tensors.
TracedTensor mlp(TracedTensor x, TracedTensor w1, TracedTensor b1, TracedTensor w2, TracedTensor b2) {
  TracedTensor h = graphc::relu(graphc::linear(x, w1, b1));
  return graphc::softmax(graphc::linear(h, w2, b2), -1);
}

/// y = x * scale when the mean of x is positive, else tanh(x) - scale;
/// `scale` is used inside the branches without being passed: the tracer
/// lifts it into an operand.
TracedTensor gated(TracedTensor x, TracedTensor scale) {
  TracedTensor positive = graphc::mean(x) > 0.0;
  return graphc::cond(
             positive, [&](TracedTensor a) { return a * scale; },
             [&](TracedTensor a) { return graphc::tanh(a) - scale; }, {x})
      .front();
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string deviceName = argc > 1 ? argv[1] : "cpu";
  auto device = graphc::parseDevice(deviceName);
  if (!device) {
    std::fprintf(stderr, "usage: embed [cpu|cuda|reference]\n");
    return 2;
  }
  bool ok = true;
  std::printf("graphc %s, device %s\n\n", std::string(graphc::version()).c_str(), deviceName.c_str());

  // 1. Trace an MLP with a symbolic batch size, compile it, run it.
  graphc::Graph g = graphc::trace(mlp,
                                  {{DType::F32, {"B", 16}, "x"},
                                   {DType::F32, {32, 16}, "w1"},
                                   {DType::F32, {32}, "b1"},
                                   {DType::F32, {4, 32}, "w2"},
                                   {DType::F32, {4}, "b2"}},
                                  "mlp");
  std::printf("traced:\n%s\n", g.text().c_str());
  graphc::Executable exe = graphc::compile(g, {.device = *device});
  std::vector<Tensor> inputs{filled({8, 16}, 1), filled({32, 16}, 2), filled({32}, 3), filled({4, 32}, 4),
                             filled({4}, 5)};
  std::vector<Tensor> out = exe.run(inputs);
  std::printf("mlp(x: f32[8, 16]) row 0: [%.6f, %.6f, %.6f, %.6f]\n", out[0].getDouble(0), out[0].getDouble(1),
              out[0].getDouble(2), out[0].getDouble(3));
  graphc::Executable reference = graphc::compile(g, {.device = graphc::Device::Reference});
  ok &= check("mlp, B = 8", out, reference.run(inputs));

  // The same Executable takes any batch size: B is symbolic.
  inputs[0] = filled({100, 16}, 6);
  ok &= check("mlp, B = 100 (same executable)", exe.run(inputs), reference.run(inputs));

  // 2. A data-dependent branch, taken both ways.
  graphc::Graph c = graphc::trace(gated, {{DType::F32, {64}, "x"}, {DType::F32, {}, "scale"}}, "gated");
  std::printf("\ntraced:\n%s\n", c.text().c_str());
  graphc::Executable gatedExe = graphc::compile(c, {.device = *device});
  graphc::Executable gatedRef = graphc::compile(c, {.device = graphc::Device::Reference});
  Tensor scale(DType::F32, {});
  scale.setDouble(0, 3.0);
  for (double shift : {+2.0, -2.0}) {
    Tensor x = filled({64}, 7);
    for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, x.getDouble(i) + shift);
    ok &= check(shift > 0 ? "cond, then branch" : "cond, else branch", gatedExe.run({x, scale}),
                gatedRef.run({x, scale}));
  }

  // 3. compiled(fn): guards and recompiles. A new static size recompiles
  // once, with the reason logged; a dynamic dim never does.
  graphc::CompiledFunction fn = graphc::compiled(mlp, {.device = *device, .name = "mlp"});
  fn.setLogSink([](const std::string& line) { std::printf("  log: %s\n", line.c_str()); });
  std::vector<Tensor> weights{filled({32, 16}, 2), filled({32}, 3), filled({4, 32}, 4), filled({4}, 5)};
  auto call = [&](graphc::CompiledFunction& f, int64_t batch) {
    std::vector<Tensor> args{filled({batch, 16}, 8)};
    args.insert(args.end(), weights.begin(), weights.end());
    return std::pair{f(args), reference.run(args)};
  };
  std::printf("\ncompiled(mlp), static sizes:\n");
  for (int64_t batch : {32, 32, 64, 64}) {
    auto [got, want] = call(fn, batch);
    ok &= check(("  call with B = " + std::to_string(batch)).c_str(), got, want);
  }
  graphc::CompileStats stats = fn.stats();
  std::printf("  compiles %d, cache hits %d\n", stats.compiles, stats.cacheHits);
  ok &= stats.compiles == 2 && stats.cacheHits == 2;

  graphc::CompiledFunction dynamic =
      graphc::compiled(mlp, {.device = *device, .dynamicDims = {{.input = 0, .dim = 0, .symbol = "B"}}, .name = "mlp"});
  dynamic.setLogSink([](const std::string& line) { std::printf("  log: %s\n", line.c_str()); });
  std::printf("compiled(mlp), input 0 dim 0 dynamic:\n");
  for (int64_t batch : {32, 64, 7}) {
    auto [got, want] = call(dynamic, batch);
    ok &= check(("  call with B = " + std::to_string(batch)).c_str(), got, want);
  }
  stats = dynamic.stats();
  std::printf("  compiles %d, cache hits %d\n", stats.compiles, stats.cacheHits);
  ok &= stats.compiles == 1 && stats.cacheHits == 2;

  std::printf("\n%s\n", ok ? "all results match the reference" : "MISMATCH");
  return ok ? 0 : 1;
} catch (const graphc::Error& e) {
  std::fprintf(stderr, "embed: %s\n", e.what());
  return 1;
}
