// The cuda backend without a GPU (these run in CI): every kernel generated
// for the project's graphs and for the random-graph corpus compiles with
// NVRTC for sm_80 and sm_90; the emitted source has the fusions and the
// strategies it should; input identifiers never reach it; NVRTC errors
// point at the generated line; the disk cache survives, and recovers from
// corruption; the cuSOLVER and cuBLASLt dispatch decisions; and without a
// device, compiling fails with one clear line.
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ProjectGraphs.h"
#include "RandomGraph.h"
#include "TestUtil.h"
#include "codegen/DiskCache.h"
#include "codegen/cuda/CublasLtGemm.h"
#include "codegen/cuda/CudaEigh.h"
#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "codegen/cuda/Nvrtc.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/Lowering.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;
using codegen::cuda::CudaModule;

int countKernels(const std::string& source) {
  int n = 0;
  for (size_t at = source.find("extern \"C\" __global__"); at != std::string::npos;
       at = source.find("extern \"C\" __global__", at + 1))
    ++n;
  return n;
}

void expectCompiles(const std::string& source, const std::string& what) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    try {
      const auto m = codegen::cuda::compileModule(source, arch);
      EXPECT_GT(m.binary.size(), 0u) << what << " " << arch;
    } catch (const ir::Error& e) {
      ADD_FAILURE() << what << " for " << arch << ": " << e.what();
    }
  }
}

// ---- every project graph -------------------------------------------------------

class CudaProjectGraphCompiles : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaProjectGraphCompiles, WithNvrtcForSm80AndSm90) {
  const std::string param = GetParam();
  const size_t hash = param.rfind('#');
  const std::string chunk =
      testing::chunksOf(fs::path(GRAPHC_SOURCE_DIR) / param.substr(0, hash))[std::stoul(param.substr(hash + 1))];
  auto m = testing::optimisedOk(chunk);
  ASSERT_TRUE(m);
  const CudaModule module = codegen::cuda::emitGraph(*m->entry());
  EXPECT_EQ(static_cast<size_t>(countKernels(module.source)),
            module.kernels.size() + (module.hasConditions ? 1 : 0) +
                (module.hasTranspose ? 4 : 0));  // transposes and eigh checks
  expectCompiles(module.source, param);
}

INSTANTIATE_TEST_SUITE_P(ExamplesAndLit, CudaProjectGraphCompiles, ::testing::ValuesIn(testing::projectGraphs()),
                         [](const auto& info) { return testing::paramName(info.param); });

// ---- the random-graph corpus ----------------------------------------------------

/// Kernels of 25 random graphs per module (renamed apart): seeds 1–100 in
/// f64 and 1–50 in f32 (each module takes NVRTC about 15 s per architecture
/// on 2 cores; graphc-difftest covers far more graphs on the cpu).
class CudaRandomGraphsCompile : public ::testing::TestWithParam<int> {};

TEST_P(CudaRandomGraphsCompile, WithNvrtcForSm80AndSm90) {
  const int batch = GetParam();
  const bool f32 = batch >= 4;
  std::vector<std::unique_ptr<ir::Module>> modules;
  std::vector<codegen::kernel::Kernel> kernels;
  bool conditions = false, eigh = false;
  for (int s = 0; s < 25; ++s) {
    const uint64_t seed = static_cast<uint64_t>(1 + (batch % 4) * 25 + s);
    difftest::RandomGraphOptions options;
    options.useF32 = f32;
    auto m = testing::optimisedOk(difftest::randomGraph(seed, options));
    ASSERT_TRUE(m) << "seed " << seed;
    for (const ir::Node* f : codegen::kernel::fusedOps(m->entry()->body)) {
      kernels.push_back(codegen::kernel::lower(*f));
      kernels.back().name = fmt::format("g{}_{}", seed, kernels.back().name);
    }
    const std::string text = ir::print(*m);
    conditions |= text.find("cond") != std::string::npos;
    eigh |= text.find("eigh") != std::string::npos;
    modules.push_back(std::move(m));
  }
  std::vector<const codegen::kernel::Kernel*> pointers;
  for (const auto& k : kernels) pointers.push_back(&k);
  codegen::cuda::EmitOptions emit;
  emit.conditions = conditions;
  emit.transpose = eigh;
  const CudaModule module = codegen::cuda::emitModule(pointers, emit);
  EXPECT_EQ(module.kernels.size(), kernels.size());
  expectCompiles(module.source, fmt::format("random graphs batch {} ({})", batch, f32 ? "f32" : "f64"));
}

INSTANTIATE_TEST_SUITE_P(Corpus, CudaRandomGraphsCompile, ::testing::Range(0, 6));

// ---- what the source holds -------------------------------------------------------

TEST(CudaCodegen, LinearBiasReluIsOneTensorCoreKernelWithTheEpilogueInRegisters) {
  auto m = testing::optimisedOk(R"(
graph @f(%x: bf16[B, 256], %w: bf16[128, 256], %b: bf16[128]) -> bf16[B, 128] {
  %y = linear(%x, %w, %b)
  %r = relu(%y)
  return %r
}
)");
  ASSERT_TRUE(m);
  const CudaModule module = codegen::cuda::emitGraph(*m->entry());
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(countKernels(module.source), 1);
  EXPECT_EQ(module.kernels[0].name, "k0_linear_relu");
  EXPECT_EQ(module.kernels[0].strategy, codegen::cuda::Strategy::GemmTensorCore);
  EXPECT_NE(module.source.find("gc::mma_bf16(acc[i][j], fa[i], fb[j])"), std::string::npos);
  // The relu reads the accumulator register directly; the bias joins it in f32.
  EXPECT_NE(module.source.find("= (float)(acc[i][j][c]);"), std::string::npos);
  EXPECT_NE(module.source.find("<= 0.0f ? 0.0f :"), std::string::npos);
  expectCompiles(module.source, "linear+relu");
}

TEST(CudaCodegen, F32LinearUsesTheSimtTemplate) {
  auto m = testing::optimisedOk(R"(
graph @f(%x: f32[64, 32], %w: f32[16, 32], %b: f32[16]) -> f32[64, 16] {
  %y = linear(%x, %w, %b)
  %r = relu(%y)
  return %r
}
)");
  ASSERT_TRUE(m);
  const CudaModule module = codegen::cuda::emitGraph(*m->entry());
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].strategy, codegen::cuda::Strategy::GemmSimt);
  EXPECT_NE(module.source.find("fma(ra[i], rb[j], acc[i][j])"), std::string::npos);
}

TEST(CudaCodegen, ContiguousPointwiseKernelsGetTheVectorPath) {
  auto m = testing::optimisedOk(R"(
graph @f(%x: f32[N, 1024], %a: f32[1024], %c: f32[]) -> f32[N, 1024] {
  %y = mul(%x, %a)
  %z = add(%y, %c)
  %g = gelu(%z)
  return %g
}
)");
  ASSERT_TRUE(m);
  const CudaModule module = codegen::cuda::emitGraph(*m->entry());
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].vectorWidth, 4);
  EXPECT_NE(module.source.find("gc::Vec<float, 4>"), std::string::npos);
  // The alignment and the last dim are checked on the device, with the scalar loop as fallback.
  EXPECT_NE(module.source.find("if (1024ll % 4 == 0 && (u64)in0 % 16 == 0"), std::string::npos) << module.source;
  EXPECT_NE(module.source.find("for (i64 p = first; p < total; p += stride)"), std::string::npos);
  expectCompiles(module.source, "vector pointwise");
}

TEST(CudaCodegen, RowReductionStrategyFollowsTheRowLength) {
  const char* graph = R"(
graph @f(%x: f32[64, {}]) -> f32[64, {}] {{
  %s = softmax(%x) {{dim = -1}}
  return %s
}}
)";
  auto shortRows = testing::optimisedOk(fmt::format(fmt::runtime(graph), 128, 128));
  auto longRows = testing::optimisedOk(fmt::format(fmt::runtime(graph), 4096, 4096));
  auto symbolic = testing::optimisedOk(fmt::format(fmt::runtime(graph), "R", "R"));
  ASSERT_TRUE(shortRows && longRows && symbolic);
  const CudaModule a = codegen::cuda::emitGraph(*shortRows->entry());
  const CudaModule b = codegen::cuda::emitGraph(*longRows->entry());
  const CudaModule c = codegen::cuda::emitGraph(*symbolic->entry());
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].strategy, codegen::cuda::Strategy::WarpPerRow);
  EXPECT_EQ(b.kernels[0].strategy, codegen::cuda::Strategy::BlockPerRow);
  EXPECT_EQ(c.kernels[0].strategy, codegen::cuda::Strategy::BlockPerRow);
  EXPECT_NE(a.source.find("gc::warp_reduce("), std::string::npos);
  EXPECT_NE(b.source.find("gc::block_reduce("), std::string::npos);
  // Static rows of up to 16 elements a thread stay in registers: the input is read once.
  EXPECT_EQ(a.kernels[0].rowChunks, 4);   // 128 / 32 lanes
  EXPECT_EQ(b.kernels[0].rowChunks, 16);  // 4096 / 256 threads
  EXPECT_EQ(c.kernels[0].rowChunks, 0);   // symbolic
  auto reads = [](const std::string& source) {
    int n = 0;
    for (size_t at = source.find("in0["); at != std::string::npos; at = source.find("in0[", at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(reads(b.source), 1);  // one load of each element, then max, sum and the stores from registers
  EXPECT_EQ(reads(c.source), 3);  // re-read by each pass
  EXPECT_EQ(b.source.find("atomicAdd"), std::string::npos);  // deterministic: no atomics
  expectCompiles(a.source, "warp softmax");
  expectCompiles(b.source, "block softmax");
}

TEST(CudaCodegen, InputIdentifiersNeverReachTheSource) {
  auto m = testing::optimisedOk(R"(
graph @user_graph_name(%user_input_x: f32[UserBatch, 8], %user_input_y: f32[UserBatch, 8]) -> f32[UserBatch, 8] {
  %user_sum = add(%user_input_x, %user_input_y)
  %user_out = tanh(%user_sum)
  return %user_out
}
)");
  ASSERT_TRUE(m);
  const CudaModule module = codegen::cuda::emitGraph(*m->entry());
  EXPECT_EQ(module.source.find("user"), std::string::npos);
  EXPECT_EQ(module.source.find("UserBatch"), std::string::npos);
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].symbols, std::vector<std::string>{"UserBatch"});  // passed as s0
  EXPECT_NE(module.source.find("const i64 s0"), std::string::npos);
}

TEST(CudaCodegen, CondAndEighModulesDefineTheirHelperKernels) {
  auto m = testing::optimisedOk(R"(
graph @f(%p: bool[], %a: f64[4, 4]) -> (f64[4], f64[4, 4]) {
  %w, %v = eigh(%a)
  %r = cond(%p, %v) then(%t: f64[4, 4]) {
    %n = sum(%t) {dims = [1], keepdim = true}
    %m = sub(%t, %n)
    return %m
  } else(%e: f64[4, 4]) {
    %x = exp(%e)
    return %x
  }
  return %w, %r
}
)");
  ASSERT_TRUE(m);
  const CudaModule module = codegen::cuda::emitGraph(*m->entry());
  EXPECT_TRUE(module.hasConditions);
  EXPECT_TRUE(module.hasTranspose);
  EXPECT_NE(module.source.find("cudaGraphSetConditional(handle"), std::string::npos);
  expectCompiles(module.source, "cond+eigh");
}

// ---- NVRTC errors and the caches -------------------------------------------------

TEST(Nvrtc, ErrorsQuoteTheGeneratedLine) {
  try {
    codegen::cuda::compileModule("extern \"C\" __global__ void k() {\n  int x = undefined_thing;\n}\n", "sm_80");
    FAIL() << "expected an NVRTC error";
  } catch (const ir::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nvrtc could not compile"), std::string::npos) << what;
    EXPECT_NE(what.find("graphc_module.cu(2)"), std::string::npos) << what;
    EXPECT_NE(what.find("generated line 2:   int x = undefined_thing;"), std::string::npos) << what;
  }
}

TEST(Nvrtc, RejectsArchitecturesBeforeSm80) {
  EXPECT_THROW(codegen::cuda::compileModule("extern \"C\" __global__ void k() {}\n", "sm_70"), ir::Error);
  EXPECT_THROW(codegen::cuda::compileModule("extern \"C\" __global__ void k() {}\n", "gfx90a"), ir::Error);
}

TEST(Nvrtc, DiskCacheHitsAndRecoversFromACorruptEntry) {
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("graphc-cache-test-{}", ::testing::UnitTest::GetInstance()->random_seed());
  fs::remove_all(dir);
  const char* previous = std::getenv("GRAPHC_CACHE_DIR");
  const std::string saved = previous ? previous : "";
  setenv("GRAPHC_CACHE_DIR", dir.c_str(), 1);
  const std::string source = "extern \"C\" __global__ void cache_probe(float* p) { p[threadIdx.x] *= 2.0f; }\n";
  using From = codegen::cuda::CompiledModule::From;
  codegen::cuda::clearMemoryCache();
  const auto first = codegen::cuda::compileModule(source, "sm_90");
  EXPECT_EQ(first.from, From::Nvrtc);
  EXPECT_EQ(codegen::cuda::compileModule(source, "sm_90").from, From::Memory);
  codegen::cuda::clearMemoryCache();
  const auto disk = codegen::cuda::compileModule(source, "sm_90");
  EXPECT_EQ(disk.from, From::Disk);
  EXPECT_EQ(disk.binary, first.binary);
  // One entry, no temporary files left behind.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(*codegen::cacheDirectory("cuda"))) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".cubin");
  // Flip a byte of the payload: detected, recompiled, rewritten.
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('\x5a');
  }
  codegen::cuda::clearMemoryCache();
  const auto recompiled = codegen::cuda::compileModule(source, "sm_90");
  EXPECT_EQ(recompiled.from, From::Nvrtc);
  EXPECT_EQ(recompiled.binary, first.binary);
  codegen::cuda::clearMemoryCache();
  EXPECT_EQ(codegen::cuda::compileModule(source, "sm_90").from, From::Disk);
  // A truncated entry too.
  fs::resize_file(files[0], 20);
  codegen::cuda::clearMemoryCache();
  EXPECT_EQ(codegen::cuda::compileModule(source, "sm_90").from, From::Nvrtc);
  // Different options (the architecture) are a different key.
  EXPECT_EQ(codegen::cuda::compileModule(source, "sm_80").from, From::Nvrtc);
  if (previous)
    setenv("GRAPHC_CACHE_DIR", saved.c_str(), 1);
  else
    unsetenv("GRAPHC_CACHE_DIR");
  fs::remove_all(dir);
}

// ---- library dispatch --------------------------------------------------------------

TEST(CudaEighDispatch, BatchedSyevWhereCusolverHasIt) {
  using M = codegen::cuda::EighPlan::Method;
  const auto p = codegen::cuda::planEigh(8, 10000, 11701);
  EXPECT_EQ(p.method, M::XsyevBatched);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0], std::make_pair(int64_t{0}, int64_t{10000}));
  EXPECT_EQ(codegen::cuda::planEigh(512, 10, 12004).method, M::XsyevBatched);
}

TEST(CudaEighDispatch, ChunksStayUnderTheInt32ElementLimit) {
  // 512·512·10000 elements: 2.6e9 > INT32_MAX, so the batch is cut.
  const auto p = codegen::cuda::planEigh(512, 10000, 11701);
  const int64_t perCall = INT32_MAX / (512 * 512);
  ASSERT_EQ(p.calls.size(), static_cast<size_t>((10000 + perCall - 1) / perCall));
  int64_t next = 0;
  for (auto [first, count] : p.calls) {
    EXPECT_EQ(first, next);
    EXPECT_LE(count * 512 * 512, int64_t{INT32_MAX});
    next = first + count;
  }
  EXPECT_EQ(next, 10000);
}

TEST(CudaEighDispatch, OlderCusolverUsesJacobiForSmallNAndALoopForLarge) {
  using M = codegen::cuda::EighPlan::Method;
  const auto small = codegen::cuda::planEigh(32, 2000, 11700);
  EXPECT_EQ(small.method, M::SyevjBatched);
  EXPECT_EQ(small.calls.size(), 1u);
  const auto large = codegen::cuda::planEigh(33, 5, 11600);
  EXPECT_EQ(large.method, M::XsyevdLoop);
  ASSERT_EQ(large.calls.size(), 5u);
  EXPECT_EQ(large.calls[4], std::make_pair(int64_t{4}, int64_t{1}));
  EXPECT_TRUE(codegen::cuda::planEigh(8, 0, 11701).calls.empty());
}

codegen::kernel::Kernel onlyKernel(const std::string& text) {
  auto m = testing::optimisedOk(text);
  const auto fused = codegen::kernel::fusedOps(m->entry()->body);
  EXPECT_EQ(fused.size(), 1u);
  return codegen::kernel::lower(*fused.at(0));
}

TEST(CublasLtDispatch, MatchesBiasActivationEpilogues) {
  using K = codegen::cuda::LtEpilogue::Kind;
  const char* graph = R"(
graph @f(%x: {0}[64, 32], %w: {0}[16, 32], %b: {0}[16]) -> {0}[64, 16] {{
  %y = linear(%x, %w, %b)
  {1}
}}
)";
  auto relu =
      codegen::cuda::matchLtEpilogue(onlyKernel(fmt::format(fmt::runtime(graph), "f32", "%r = relu(%y)\n  return %r")));
  ASSERT_TRUE(relu);
  EXPECT_EQ(relu->kind, K::ReluBias);
  EXPECT_EQ(relu->bias, 2);
  auto bf16 = codegen::cuda::matchLtEpilogue(
      onlyKernel(fmt::format(fmt::runtime(graph), "bf16", "%r = relu(%y)\n  return %r")));
  ASSERT_TRUE(bf16);
  EXPECT_EQ(bf16->kind, K::ReluBias);
  auto bias = codegen::cuda::matchLtEpilogue(onlyKernel(fmt::format(fmt::runtime(graph), "f32", "return %y")));
  ASSERT_TRUE(bias);
  EXPECT_EQ(bias->kind, K::Bias);
  // The decompose pass has expanded gelu (either form) by the time kernels
  // exist, so it keeps the generated GEMM, as does f64.
  EXPECT_FALSE(codegen::cuda::matchLtEpilogue(
      onlyKernel(fmt::format(fmt::runtime(graph), "f32", "%r = gelu(%y)\n  return %r"))));
  EXPECT_FALSE(codegen::cuda::matchLtEpilogue(
      onlyKernel(fmt::format(fmt::runtime(graph), "f16", "%r = gelu(%y) {approximate = \"tanh\"}\n  return %r"))));
  EXPECT_FALSE(codegen::cuda::matchLtEpilogue(
      onlyKernel(fmt::format(fmt::runtime(graph), "f64", "%r = relu(%y)\n  return %r"))));
  EXPECT_FALSE(
      codegen::cuda::matchLtEpilogue(onlyKernel(fmt::format(fmt::runtime(graph), "f32", "%r = exp(%y)\n  return %r"))));
}

// ---- no device -----------------------------------------------------------------------

TEST(CudaDevice, WithoutOneCompilingFailsWithOneClearLine) {
  const std::string reason = codegen::cuda::noDeviceReason();
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is present: " << codegen::cuda::device().name;
  auto m = testing::optimisedOk("graph @f(%x: f32[4]) -> f32[4] {\n  %y = exp(%x)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  try {
    codegen::cuda::compileGraph(*m->entry());
    FAIL() << "expected no CUDA device";
  } catch (const ir::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what, "no CUDA device: " + reason);
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace graphc
