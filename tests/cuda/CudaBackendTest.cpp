// The cuda backend on a GPU against the reference interpreter (the oracle),
// with torch's default tolerances (tests/support/Tolerance.h) and outputs poisoned before each run: every
// golden case, every project graph, the random-graph differential test,
// eigh from n = 3 to 512 and batches up to 10,000, cond taken both ways
// inside one replayed CUDA graph, replay after the inputs change, and the
// cuBLASLt path. Without a device each test skips, printing why.
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "GoldenCases.h"
#include "ProjectGraphs.h"
#include "RandomGraph.h"
#include "TestUtil.h"
#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "passes/PassManager.h"
#include "runtime/Npy.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;
using runtime::Tensor;

#define REQUIRE_CUDA_DEVICE()                                          \
  do {                                                                 \
    const std::string reason = codegen::cuda::noDeviceReason();        \
    if (!reason.empty()) GTEST_SKIP() << "no CUDA device: " << reason; \
  } while (0)

/// The reference's tolerance, widened where the GPU legitimately differs:
/// f32 GEMMs accumulate in f32 (scaled by the output's magnitude), eigh is
/// another solver.
testing::Tolerance toleranceFor(const Tensor& want, bool gemm, bool eigh) {
  testing::Tolerance tol = testing::defaultTolerance(want.dtype());
  if (eigh) tol = {tol.rtol * 10, tol.atol * 10};
  if (gemm && (want.dtype() == ir::DType::F32 || want.dtype() == ir::DType::F16 || want.dtype() == ir::DType::BF16)) {
    double largest = 0;
    for (int64_t i = 0; i < want.numel(); ++i) largest = std::max(largest, std::fabs(want.getDouble(i)));
    tol = {std::max(tol.rtol, 1e-5), std::max(tol.atol, 1e-5 * std::max(largest, 1.0))};
  }
  return tol;
}

/// Runs `text` on cuda (captured and replayed, and through run()) and on
/// the reference, and compares.
void expectMatchesReference(const std::string& text, const std::string& what, uint64_t seed = 7) {
  auto original = testing::parseOk(text);
  auto m = testing::optimisedOk(text);
  ASSERT_TRUE(original && m) << what;
  const ir::Graph& g = *m->entry();
  const std::vector<Tensor> inputs = testing::randomInputs(g, seed);
  // The oracle first, and the replay and the run on copies of their own:
  // each writes the inputs that results update in place.
  const std::vector<Tensor> want = testing::copiesOf(runtime::interpret(*original->entry(), inputs));
  auto exe = codegen::cuda::compileGraph(g);
  const std::vector<Tensor> replayInputs = testing::copiesOf(inputs);
  std::vector<Tensor> replayed = testing::poisonedOutputs(g, replayInputs);
  exe->capture(replayInputs, replayed);
  exe->replay();
  const std::vector<Tensor> ran = exe->run(testing::copiesOf(inputs));
  const bool eigh = text.find("eigh(") != std::string::npos;
  const bool gemm = testing::hasGemm(original->entry()->body);
  for (size_t k = 0; k < want.size(); ++k) {
    const bool vectors = eigh && want[k].rank() >= 2 && want[k].shape().back() == want[k].shape()[want[k].rank() - 2];
    const testing::Tolerance tol = toleranceFor(want[k], gemm, eigh);
    for (const Tensor* got : std::initializer_list<const Tensor*>{&replayed[k], &ran[k]}) {
      const Tensor aligned = vectors ? testing::alignColumns(*got, want[k]) : *got;
      EXPECT_TRUE(testing::allClose(aligned, want[k], tol)) << what << " output " << k;
    }
  }
}

// ---- golden cases and project graphs --------------------------------------------

class CudaGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaGolden, MatchesReference) {
  REQUIRE_CUDA_DEVICE();
  const std::string name = GetParam();
  const std::string path = (testing::kGoldenCases / (name + ".graph")).string();
  ir::DiagnosticEngine diags;
  const auto source = frontend::readSourceFile(path, diags);
  ASSERT_TRUE(source);
  const std::string text = source->text;
  auto original = testing::parseOk(text);
  auto m = testing::optimisedOk(text);
  ASSERT_TRUE(original && m);
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < m->entry()->body.params().size(); ++k)
    inputs.push_back(runtime::readNpy((testing::kGoldenCases / (name + ".in" + std::to_string(k) + ".npy")).string()));
  auto exe = codegen::cuda::compileGraph(*m->entry());
  std::vector<Tensor> got = testing::poisonedOutputs(*m->entry(), inputs);
  exe->capture(inputs, got);
  exe->replay();
  const std::vector<Tensor> want = runtime::interpret(*original->entry(), inputs);
  const bool eigh = name.rfind("eigh", 0) == 0;
  for (size_t k = 0; k < want.size(); ++k) {
    const Tensor actual = eigh && k == 1 ? testing::alignColumns(got[k], want[k]) : got[k];
    EXPECT_TRUE(
        testing::allClose(actual, want[k], toleranceFor(want[k], testing::hasGemm(original->entry()->body), eigh)))
        << name << " output " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, CudaGolden, ::testing::ValuesIn(testing::goldenCaseNames()),
                         [](const auto& info) { return testing::paramName(info.param); });

class CudaProjectGraph : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaProjectGraph, MatchesReference) {
  REQUIRE_CUDA_DEVICE();
  const std::string param = GetParam();
  const size_t hash = param.rfind('#');
  expectMatchesReference(
      testing::chunksOf(fs::path(GRAPHC_SOURCE_DIR) / param.substr(0, hash))[std::stoul(param.substr(hash + 1))],
      param);
}

INSTANTIATE_TEST_SUITE_P(ExamplesAndLit, CudaProjectGraph, ::testing::ValuesIn(testing::projectGraphs()),
                         [](const auto& info) { return testing::paramName(info.param); });

// ---- the random-graph differential test ----------------------------------------------

class CudaDifferential : public ::testing::TestWithParam<int> {};

TEST_P(CudaDifferential, RandomGraphsMatchReference) {
  REQUIRE_CUDA_DEVICE();
  const bool f32 = GetParam() == 1;
  for (uint64_t seed = 1; seed <= (f32 ? 100u : 300u); ++seed) {
    difftest::RandomGraphOptions options;
    options.useF32 = f32;
    expectMatchesReference(difftest::randomGraph(seed, options), fmt::format("seed {} ({})", seed, f32 ? "f32" : "f64"),
                           seed);
    if (HasFailure()) break;  // one graph's report is enough to replay it
  }
}

INSTANTIATE_TEST_SUITE_P(F64AndF32, CudaDifferential, ::testing::Values(0, 1));

// ---- eigh -----------------------------------------------------------------------------

/// Symmetric matrices with well-separated eigenvalues: A = Q diag(1..n) Qᵀ + noise.
Tensor symmetricBatch(ir::DType t, int64_t batch, int64_t n, uint64_t seed) {
  Tensor r = runtime::randomTensor(ir::DType::F64, {batch, n, n}, seed);
  Tensor a(t, {batch, n, n});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const int64_t ij = (b * n + i) * n + j, ji = (b * n + j) * n + i;
        a.setDouble(ij, 0.5 * (r.getDouble(ij) + r.getDouble(ji)) + (i == j ? static_cast<double>(i) : 0.0));
      }
  return a;
}

void expectEigh(ir::DType t, int64_t batch, int64_t n) {
  const std::string dt = t == ir::DType::F64 ? "f64" : "f32";
  const std::string text = fmt::format(
      "graph @f(%a: {0}[{1}, {2}, {2}]) -> ({0}[{1}, {2}], {0}[{1}, {2}, {2}]) {{\n  %w, %v = eigh(%a)\n  return %w, "
      "%v\n}}\n",
      dt, batch, n);
  auto m = testing::optimisedOk(text);
  ASSERT_TRUE(m);
  const Tensor a = symmetricBatch(t, batch, n, 11);
  auto exe = codegen::cuda::compileGraph(*m->entry());
  const std::vector<Tensor> got = exe->run({a});
  // Check the decomposition itself (A V = V diag(w), ascending w) on a sample of matrices.
  const double tol = (t == ir::DType::F64 ? 1e-9 : 2e-3) * static_cast<double>(n);
  for (int64_t b = 0; b < batch; b += std::max<int64_t>(1, batch / 16)) {
    for (int64_t k = 1; k < n; ++k) EXPECT_LE(got[0].getDouble(b * n + k - 1), got[0].getDouble(b * n + k) + tol);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < n; ++k) {
        double av = 0;
        for (int64_t j = 0; j < n; ++j) av += a.getDouble((b * n + i) * n + j) * got[1].getDouble((b * n + j) * n + k);
        worst = std::max(worst, std::fabs(av - got[0].getDouble(b * n + k) * got[1].getDouble((b * n + i) * n + k)));
      }
    EXPECT_LE(worst, tol) << dt << " batch " << batch << " n " << n << " matrix " << b;
  }
}

TEST(CudaEigh, SizesFrom3To512) {
  REQUIRE_CUDA_DEVICE();
  for (int64_t n : {3, 8, 17, 32, 33, 64, 100, 256, 512})
    for (ir::DType t : {ir::DType::F32, ir::DType::F64}) expectEigh(t, n <= 64 ? 37 : 3, n);
}

TEST(CudaEigh, BatchesUpTo10000) {
  REQUIRE_CUDA_DEVICE();
  expectEigh(ir::DType::F32, 10000, 8);
  expectEigh(ir::DType::F64, 2000, 32);
}

TEST(CudaEigh, AFailureNamesItsBatchIndex) {
  REQUIRE_CUDA_DEVICE();
  auto m = testing::optimisedOk(
      "graph @f(%a: f32[37, 16, 16]) -> (f32[37, 16], f32[37, 16, 16]) {\n  %w, %v = eigh(%a)\n  return %w, %v\n}\n");
  ASSERT_TRUE(m);
  Tensor a = symmetricBatch(ir::DType::F32, 37, 16, 5);
  for (int64_t i = 0; i < 16 * 16; ++i) a.setDouble(21 * 16 * 16 + i, NAN);
  auto exe = codegen::cuda::compileGraph(*m->entry());
  try {
    exe->run({a});
    FAIL() << "expected eigh to fail on batch index 21";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch index 21"), std::string::npos) << e.what();
  }
}

// ---- cond under capture, replay -----------------------------------------------------------

constexpr const char* kCondGraph = R"(
graph @f(%x: f32[256, 64], %w: f32[32, 64]) -> (f32[256, 32]) {
  %s = sum(%x)
  %p = gt(%s, 0.0)
  %y = cond(%p, %x, %w) then(%a: f32[256, 64], %b: f32[32, 64]) {
    %l = linear(%a, %b)
    %r = relu(%l)
    return %r
  } else(%a: f32[256, 64], %b: f32[32, 64]) {
    %l = linear(%a, %b)
    %m = amax(%l) {dims = [1], keepdim = true}
    %d = sub(%l, %m)
    return %d
  }
  return %y
}
)";

TEST(CudaCapture, CondTakesBothWaysInsideOneReplayedGraph) {
  REQUIRE_CUDA_DEVICE();
  auto original = testing::parseOk(kCondGraph);
  auto m = testing::optimisedOk(kCondGraph);
  ASSERT_TRUE(original && m);
  auto exe = codegen::cuda::compileGraph(*m->entry());
  Tensor x = runtime::randomTensor(ir::DType::F32, {256, 64}, 3);
  const Tensor w = runtime::randomTensor(ir::DType::F32, {32, 64}, 4);
  for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, std::fabs(x.getDouble(i)));  // sum > 0: then
  std::vector<Tensor> out = testing::poisonedOutputs(*m->entry(), {x, w});
  exe->capture({x, w}, out);
  for (int round = 0; round < 4; ++round) {
    if (round % 2 == 1)  // flip the predicate's sign in the same, captured input buffer
      for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, -x.getDouble(i));
    out[0].fillBytes(0xff);
    exe->replay();
    const std::vector<Tensor> want = runtime::interpret(*original->entry(), {x, w});
    EXPECT_TRUE(testing::allClose(out[0], want[0], toleranceFor(want[0], true, false)))
        << "round " << round << (round % 2 ? " (else)" : " (then)");
  }
}

TEST(CudaCapture, ReplaySeesChangedInputsAndStepByStepAgrees) {
  REQUIRE_CUDA_DEVICE();
  const char* text =
      "graph @f(%x: f32[N, 300], %y: f32[N, 300]) -> f32[N, 300] {\n  %a = mul(%x, %y)\n  %t = tanh(%a)\n"
      "  %s = softmax(%t) {dim = -1}\n  return %s\n}\n";
  auto original = testing::parseOk(text);
  auto m = testing::optimisedOk(text);
  ASSERT_TRUE(original && m);
  auto exe = codegen::cuda::compileGraph(*m->entry());
  Tensor x = runtime::randomTensor(ir::DType::F32, {33, 300}, 1);
  Tensor y = runtime::randomTensor(ir::DType::F32, {33, 300}, 2);
  std::vector<Tensor> out = testing::poisonedOutputs(*m->entry(), {x, y});
  exe->capture({x, y}, out);
  for (int round = 0; round < 3; ++round) {
    const Tensor fresh = runtime::randomTensor(ir::DType::F32, {33, 300}, 10 + static_cast<uint64_t>(round));
    std::memcpy(x.data(), fresh.data(), x.nbytes());
    exe->replay();
    const std::vector<Tensor> want = runtime::interpret(*original->entry(), {x, y});
    EXPECT_TRUE(testing::allClose(out[0], want[0], testing::defaultTolerance(ir::DType::F32))) << "replay " << round;
    out[0].fillBytes(0xff);
    codegen::cuda::replayStepByStep(*exe);
    EXPECT_TRUE(testing::allClose(out[0], want[0], testing::defaultTolerance(ir::DType::F32)))
        << "step by step " << round;
  }
}

TEST(CudaCapture, RejectsOutputsOfTheWrongType) {
  REQUIRE_CUDA_DEVICE();
  auto m = testing::optimisedOk("graph @f(%x: f32[4]) -> f32[4] {\n  %y = exp(%x)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  auto exe = codegen::cuda::compileGraph(*m->entry());
  const Tensor x(ir::DType::F32, {4});
  std::vector<Tensor> wrong = {Tensor(ir::DType::F64, {4})};
  EXPECT_THROW(exe->capture({x}, wrong), ir::Error);
  EXPECT_THROW(exe->replay(), ir::Error);
}

// Results that update inputs in place: run() and replay() leave the new
// values in the caller's tensors (computed into the input's device buffer,
// or copied in after the last read), as the reference computes them.
TEST(CudaInputUpdates, RunAndReplayWriteTheCallersTensors) {
  REQUIRE_CUDA_DEVICE();
  const char* texts[] = {
      "graph @sgd(%w: f32[N, 3], %m: f32[N, 3], %g: f32[N, 3]) -> (f32[N, 3] updates %w, f32[N, 3] updates %m) {\n"
      "  %mm = mul(%m, 0.9)\n  %m2 = add(%mm, %g)\n  %s = mul(%m2, 0.1)\n  %w2 = sub(%w, %s)\n"
      "  return %w2, %m2\n}\n",
      "graph @swap(%a: f32[5], %b: f32[5]) -> (f32[5] updates %a, f32[5] updates %b, f32[5]) {\n"
      "  return %b, %a, %a\n}\n",
      "graph @gemm(%w: f32[8, 8], %x: f32[8, 8]) -> (f32[8, 8] updates %w) {\n"
      "  %y = matmul(%w, %x)\n  %w2 = add(%y, %w)\n  return %w2\n}\n",
  };
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    auto original = testing::parseOk(text);
    auto m = testing::optimisedOk(text);
    ASSERT_TRUE(original && m);
    const ir::Graph& g = *m->entry();
    auto exe = codegen::cuda::compileGraph(g);
    std::vector<Tensor> inputs;
    for (const auto& p : g.body.params()) {
      std::vector<int64_t> shape = runtime::concreteShape(ir::substitute(p->type, {{"N", 7}}));
      inputs.push_back(runtime::randomTensor(ir::DType::F32, shape, 3 + static_cast<uint64_t>(p->index())));
    }
    auto expectStep = [&](const std::vector<Tensor>& outputs, const std::vector<Tensor>& before, const char* what) {
      const std::vector<Tensor> want = runtime::interpret(*original->entry(), before);
      for (size_t k = 0; k < want.size(); ++k)
        EXPECT_TRUE(testing::allClose(outputs[k], want[k], toleranceFor(want[k], true, false))) << what << " " << k;
    };
    std::vector<Tensor> before = testing::copiesOf(inputs);
    std::vector<Tensor> outputs = exe->run(inputs);
    expectStep(testing::copiesOf(outputs), before, "run");
    for (const ir::InputUpdate& u : g.inputUpdates)
      EXPECT_EQ(outputs[u.result].data(), inputs[static_cast<size_t>(u.param->index())].data());
    std::vector<Tensor> bound = testing::poisonedOutputs(g, inputs);
    exe->capture(inputs, bound);
    for (int round = 0; round < 2; ++round) {
      before = testing::copiesOf(inputs);
      exe->replay();
      expectStep(testing::copiesOf(bound), before, "replay");
    }
  }
}

// ---- cuBLASLt ---------------------------------------------------------------------------

TEST(CudaCublasLt, LinearBiasReluMatchesReference) {
  REQUIRE_CUDA_DEVICE();
  for (const char* dt : {"f32", "bf16", "f16"}) {
    const std::string text = fmt::format(
        "graph @f(%x: {0}[300, 256], %w: {0}[96, 256], %b: {0}[96]) -> {0}[300, 96] {{\n  %y = linear(%x, %w, %b)\n"
        "  %r = relu(%y)\n  return %r\n}}\n",
        dt);
    auto original = testing::parseOk(text);
    auto m = testing::optimisedOk(text);
    ASSERT_TRUE(original && m);
    codegen::CompileOptions options;
    options.matmul = codegen::MatmulImpl::CublasLt;
    auto exe = codegen::cuda::compileGraph(*m->entry(), options);
    EXPECT_NE(exe->describe().find("cublaslt"), std::string::npos) << exe->describe();
    const std::vector<Tensor> inputs = testing::randomInputs(*m->entry(), 3);
    const std::vector<Tensor> got = exe->run(inputs);
    const std::vector<Tensor> want = runtime::interpret(*original->entry(), inputs);
    EXPECT_TRUE(testing::allClose(got[0], want[0], toleranceFor(want[0], true, false))) << dt;
  }
}

}  // namespace
}  // namespace graphc
