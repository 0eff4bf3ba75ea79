// What the generated CUDA kernels compute, checked without a GPU: every
// kernel of the project's graphs and of the random-graph corpus, and GEMMs
// of every layout and dtype, runs on the host through HostEmulation.h
// (GEMMs as 256 threads with mma.sync emulated) and must agree with the
// kernel IR evaluator (tests/differential/KernelEval.cpp, the executable
// statement of kernel IR semantics), outputs poisoned first. Symbolic
// sizes are bound to multiples of 8 so that the 16-byte vector paths run,
// and buffers come from Tensor's aligned allocations.
#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "GoldenCases.h"
#include "HostEmulation.h"
#include "KernelEval.h"
#include "ProjectGraphs.h"
#include "RandomGraph.h"
#include "TestUtil.h"
#include "codegen/MxOperands.h"
#include "codegen/cuda/CudaEmitter.h"
#include "codegen/cuda/Nvrtc.h"
#include "codegen/cuda/Preamble.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/Lowering.h"
#include "ir/SizeMath.h"
#include "passes/PassManager.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;
using runtime::Tensor;

/// A module's kernels built for the host and loaded.
class HostModule {
 public:
  explicit HostModule(std::string source, const std::string& tag) {
    const size_t at = source.find(codegen::cuda::kPreamble);
    if (at == std::string::npos) throw std::runtime_error("no preamble in the module");
    source.replace(at, std::string(codegen::cuda::kPreamble).size(), testing::kHostPreamble);
    source += testing::hostLaunchWrappers(source);
    dir_ = fs::temp_directory_path() / fmt::format("graphc-emulation-{}-{}", tag, ::getpid());
    fs::create_directories(dir_);
    const fs::path cu = dir_ / "module.cpp", so = dir_ / "module.so", log = dir_ / "log.txt";
    std::ofstream(cu) << source;
    const std::string command = fmt::format("{} -std=c++20 -O1 -fPIC -shared -w -I{} {} -o {} > {} 2>&1",
                                            GRAPHC_HOST_CXX, GRAPHC_SOURCE_DIR, cu.string(), so.string(), log.string());
    if (std::system(command.c_str()) != 0) {
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      throw std::runtime_error("host compile failed:\n" + text.substr(0, 4000));
    }
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(dlerror());
  }
  ~HostModule() {
    if (handle_) dlclose(handle_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  using Launch = void (*)(void**, unsigned);
  Launch launch(const std::string& kernel) const {
    return reinterpret_cast<Launch>(dlsym(handle_, ("graphc_launch_" + kernel).c_str()));
  }

 private:
  fs::path dir_;
  void* handle_ = nullptr;
};

int64_t extent(const std::vector<ir::Dim>& dims, const ir::SymbolBindings& sizes) {
  return ir::checkedExtent(dims, sizes, "a kernel's loops");
}

/// Runs kernel `k` (emitted as `info`) on random inputs, emulated and
/// through the evaluator; returns what differed, empty if nothing.
std::string check(const HostModule& module, const codegen::kernel::Kernel& k, const codegen::cuda::CudaKernel& info,
                  uint64_t seed, const ir::SymbolBindings& given = {}) {
  // The kernel's symbols are bound first, then its sums (`(P+1)`) take
  // their values from them, as the executables compute them.
  ir::SymbolBindings sizes = given;
  for (const std::string& factor : info.symbols)
    for (const std::string& s : ir::symbolsOf(ir::Dim::sym(factor)))
      if (!sizes.count(s)) sizes[s] = 8 + 8 * static_cast<int64_t>(sizes.size());
  for (const std::string& factor : info.symbols)
    if (!sizes.count(factor)) sizes[factor] = ir::factorValue(factor, sizes).value();
  std::vector<Tensor> inputs, outputs;
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const ir::TensorType t = ir::substitute(k.inputs[i].type, sizes);
    inputs.push_back(runtime::randomTensor(t.dtype, runtime::concreteShape(t), seed + i));
  }
  for (const auto& b : k.outputs) {
    const ir::TensorType t = ir::substitute(b.type, sizes);
    outputs.emplace_back(t.dtype, runtime::concreteShape(t));
    outputs.back().fillBytes(0xff);
  }
  std::vector<void*> pointers;
  for (Tensor& t : inputs) pointers.push_back(t.data());
  for (Tensor& t : outputs) pointers.push_back(t.data());
  std::vector<int64_t> extents;
  for (const std::string& s : info.symbols) extents.push_back(sizes.at(s));
  const int64_t total = extent(k.outer, sizes);
  if (k.gemm) {  // batch, M, N, K, as CudaExecutable binds them
    const Tensor& a = inputs[static_cast<size_t>(k.gemm->a)];
    const Tensor& b = inputs[static_cast<size_t>(k.gemm->b)];
    int64_t M = 1, N = 1, batch = 1;
    if (k.gemm->transposeB) {
      N = b.shape()[0];
      M = N == 0 ? 0 : total / N;
    } else {
      if (a.rank() > 1) M = a.shape()[a.rank() - 2];
      if (b.rank() > 1) N = b.shape().back();
      batch = M * N == 0 ? 0 : total / (M * N);
    }
    extents.insert(extents.end(), {batch, M, N, a.shape().back()});
  } else {
    extents.push_back(total);
    if (k.kind == ir::KernelKind::Reduction) extents.push_back(extent(k.reduceSizes, sizes));
  }
  std::vector<void*> args;
  for (void*& p : pointers) args.push_back(&p);
  for (int64_t& e : extents) args.push_back(&e);
  auto launch = module.launch(info.name);
  if (!launch) return "no launch wrapper for " + info.name;
  launch(args.data(), k.gemm || k.kind == ir::KernelKind::Reduction ? static_cast<unsigned>(info.blockThreads) : 1u);
  const std::vector<Tensor> want = difftest::evaluateKernel(k, inputs, sizes);
  std::string failures;
  for (size_t o = 0; o < want.size(); ++o) {
    testing::Tolerance tol = testing::defaultTolerance(want[o].dtype());
    tol = {tol.rtol * 4, tol.atol * 4};
    if (k.gemm && (want[o].dtype() == ir::DType::F32 || want[o].dtype() == ir::DType::F64)) {
      // Accumulation in the dtype (f32 on CUDA cores), the evaluator's in f64.
      double largest = 1;
      for (int64_t i = 0; i < want[o].numel(); ++i) largest = std::max(largest, std::fabs(want[o].getDouble(i)));
      tol = {1e-5, (want[o].dtype() == ir::DType::F32 ? 1e-5 : 1e-12) * largest};
    }
    const auto close = testing::allClose(outputs[o], want[o], tol);
    if (!close) failures += fmt::format("{} output {}: {}\n", info.name, o, close.message());
  }
  return failures;
}

/// Emulates every kernel of `graphs` in one host module, symbolic sizes
/// bound to `sizes` where given.
void expectKernelsMatch(const std::vector<std::pair<std::string, std::string>>& graphs, const std::string& tag,
                        const ir::SymbolBindings& sizes = {}) {
  std::vector<std::unique_ptr<ir::Module>> modules;
  std::vector<codegen::kernel::Kernel> kernels;
  std::vector<std::string> origin;
  for (const auto& [what, text] : graphs) {
    auto m = testing::optimisedOk(text);
    ASSERT_TRUE(m) << what;
    for (const ir::Node* f : codegen::kernel::fusedOps(m->entry()->body)) {
      codegen::kernel::Kernel k = codegen::kernel::lower(*f);
      k.name = fmt::format("g{}_{}", origin.size(), k.name);
      kernels.push_back(std::move(k));
      origin.push_back(what);
    }
    modules.push_back(std::move(m));
  }
  std::vector<const codegen::kernel::Kernel*> pointers;
  for (const auto& k : kernels) pointers.push_back(&k);
  const codegen::cuda::CudaModule module = codegen::cuda::emitModule(pointers);
  HostModule host(module.source, tag);
  int vectorised = 0, gemms = 0, warpRows = 0, cachedRows = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    vectorised += module.kernels[i].vectorWidth > 1;
    gemms += kernels[i].gemm.has_value();
    warpRows += module.kernels[i].strategy == codegen::cuda::Strategy::WarpPerRow;
    cachedRows += module.kernels[i].rowChunks > 0;
    const std::string failures = check(host, kernels[i], module.kernels[i], 100 + i, sizes);
    EXPECT_TRUE(failures.empty()) << origin[i] << ":\n" << failures << codegen::kernel::print(kernels[i]);
  }
  EXPECT_GT(kernels.size(), 0u);
  ::testing::Test::RecordProperty("kernels", static_cast<int>(kernels.size()));
  ::testing::Test::RecordProperty("vectorised", vectorised);
  std::printf("%s: %zu kernels emulated, %d on the vector path, %d GEMMs, %d warp-per-row, %d rows in registers\n",
              tag.c_str(), kernels.size(), vectorised, gemms, warpRows, cachedRows);
}

TEST(CudaEmulation, ProjectGraphKernelsMatchTheKernelIR) {
  std::vector<std::pair<std::string, std::string>> graphs;
  for (const std::string& param : testing::projectGraphs()) {
    const size_t hash = param.rfind('#');
    graphs.emplace_back(param, testing::chunksOf(fs::path(GRAPHC_SOURCE_DIR) /
                                                 param.substr(0, hash))[std::stoul(param.substr(hash + 1))]);
  }
  expectKernelsMatch(graphs, "project");
}

/// Both GEMM templates on every operand layout: linear (rows flattened from
/// a rank-3 input), batched matmul with a broadcast batch, matrix·vector
/// and vector·matrix; partial tiles (M, N not multiples of 128), several
/// k-tiles, K a multiple of 8 (the 16-byte loads) and not (scalar loads).
TEST(CudaEmulation, GemmTemplatesMatchTheKernelIR) {
  std::vector<std::pair<std::string, std::string>> graphs;
  for (const char* dt : {"bf16", "f16", "f32", "f64"})
    for (const char* k : {"K8", "K7"}) {
      graphs.emplace_back(fmt::format("linear {} {}", dt, k), fmt::format(R"(
graph @g(%x: {0}[2, M, {1}], %w: {0}[N, {1}], %b: {0}[N]) -> {0}[2, M, N] {{
  %y = linear(%x, %w, %b)
  %r = relu(%y)
  return %r
}}
)",
                                                                          dt, k));
      graphs.emplace_back(fmt::format("batched matmul {} {}", dt, k), fmt::format(R"(
graph @g(%x: {0}[3, M, {1}], %w: {0}[1, {1}, N]) -> {0}[3, M, N] {{
  %y = matmul(%x, %w)
  %t = tanh(%y)
  return %t
}}
)",
                                                                                  dt, k));
      graphs.emplace_back(fmt::format("vector products {} {}", dt, k), fmt::format(R"(
graph @g(%a: {0}[M, {1}], %v: {0}[{1}], %u: {0}[{1}], %b: {0}[{1}, N]) -> ({0}[M], {0}[N]) {{
  %y = matmul(%a, %v)
  %z = matmul(%u, %b)
  return %y, %z
}}
)",
                                                                                   dt, k));
    }
  expectKernelsMatch(graphs, "gemm", {{"M", 150}, {"N", 136}, {"K8", 72}, {"K7", 70}});
}

class CudaEmulationCorpus : public ::testing::TestWithParam<int> {};

TEST_P(CudaEmulationCorpus, RandomGraphKernelsMatchTheKernelIR) {
  const bool f32 = GetParam() >= 2;
  std::vector<std::pair<std::string, std::string>> graphs;
  for (int s = 0; s < 50; ++s) {
    const uint64_t seed = static_cast<uint64_t>(1 + (GetParam() % 2) * 50 + s);
    difftest::RandomGraphOptions options;
    options.useF32 = f32;
    graphs.emplace_back(fmt::format("seed {} ({})", seed, f32 ? "f32" : "f64"), difftest::randomGraph(seed, options));
  }
  expectKernelsMatch(graphs, fmt::format("corpus{}", GetParam()));
}

// f64 seeds 1–100, f32 seeds 1–100.
INSTANTIATE_TEST_SUITE_P(Corpus, CudaEmulationCorpus, ::testing::Range(0, 4));

/// The kernel forms of real models — windows (conv, conv_transpose, pools,
/// cumsum), indirect and computed indices (gather_nd, resize), iota,
/// products, the decomposed arg-extrema and normalisations — through the
/// golden cases that use them, every dtype each accepts.
TEST(CudaEmulation, ModelOpKernelsMatchTheKernelIR) {
  const std::vector<std::string> prefixes = {"conv",       "max_pool",   "avg_pool", "cumsum", "gather_nd",
                                             "resize",     "iota",       "prod",     "argmax", "argmin",
                                             "batch_norm", "group_norm", "floor",    "ceil",   "round"};
  std::vector<std::pair<std::string, std::string>> graphs;
  for (const std::string& name : testing::goldenCaseNames())
    for (const std::string& p : prefixes)
      if (name.rfind(p, 0) == 0) {
        std::ifstream in(testing::kGoldenCases / (name + ".graph"));
        graphs.emplace_back(name, std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
        break;
      }
  ASSERT_GT(graphs.size(), 100u);
  expectKernelsMatch(graphs, "model-ops");
}

/// A GEMM whose weight is held in an MX format (a cuda package's
/// --weights): the kernel with its B read as packed elements and block
/// scales, dequantised in the shared-memory load, against the same kernel
/// over the weight dequantised once on the host — bit for bit, since each
/// element decodes to the same f32 and the accumulation is the same. Every
/// format, a linear's [N, K] weight and a matmul's [K, N] (stored
/// transposed), K = 70 (two full blocks and a partial one, a partial
/// k-tile), N = 40 (a partial tile), values at several magnitudes.
TEST(CudaEmulation, MxWeightGemmsComputeWhatTheirDequantisedWeightsDo) {
  constexpr int64_t M = 5, N = 40, K = 70;
  for (bool linear : {true, false}) {
    const std::string text = linear ? R"(
graph @g(%x: f32[5, 70], %w: f32[40, 70]) -> f32[5, 40] {
  %y = linear(%x, %w)
  return %y
}
)"
                                    : R"(
graph @g(%x: f32[5, 70], %w: f32[70, 40]) -> f32[5, 40] {
  %y = matmul(%x, %w)
  return %y
}
)";
    auto m = testing::optimisedOk(text);
    ASSERT_TRUE(m);
    const std::vector<const ir::Node*> fused = codegen::kernel::fusedOps(m->entry()->body);
    ASSERT_EQ(fused.size(), 1u);
    codegen::kernel::Kernel plain = codegen::kernel::lower(*fused[0]);
    ASSERT_TRUE(plain.gemm);
    const int b = plain.gemm->b;
    plain.name = "plain";
    const Tensor x = runtime::randomTensor(ir::DType::F32, {M, K}, 1);
    // The weight as stored: N rows of K, blocks of very different magnitudes.
    Tensor rows = runtime::randomTensor(ir::DType::F32, {N, K}, 2);
    for (int64_t i = 0; i < N * K; ++i)
      rows.as<float>()[i] *= std::ldexp(1.0f, static_cast<int>((i / 32) % 9) * 3 - 12);
    for (ir::MxFormat format : {ir::MxFormat::E4M3, ir::MxFormat::E5M2, ir::MxFormat::E3M2, ir::MxFormat::E2M3,
                                ir::MxFormat::E2M1, ir::MxFormat::F16, ir::MxFormat::BF16}) {
      const codegen::MxLayout mx{format, N, K, /*transposed=*/!linear};
      std::vector<uint8_t> elements(static_cast<size_t>(N * ir::mxRowBytes(format, K)));
      std::vector<uint8_t> scales(static_cast<size_t>(N * ir::mxRowBlocks(K)));
      ir::mxQuantize(format, rows.as<float>(), N, K, elements.data(), scales.data());
      Tensor buffer(ir::DType::I8, {codegen::mxBufferBytes(mx)});
      std::memcpy(buffer.data(), elements.data(), elements.size());
      if (ir::mxHasScales(format))
        std::memcpy(buffer.data() + codegen::mxScalesOffset(mx), scales.data(), scales.size());
      Tensor dequantised(ir::DType::F32, linear ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N});
      std::vector<float> rowMajor(static_cast<size_t>(N * K));
      ir::mxDequantize(format, elements.data(), scales.data(), K, 0, N, rowMajor.data());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k)
          dequantised.as<float>()[linear ? n * K + k : k * N + n] = rowMajor[static_cast<size_t>(n * K + k)];

      codegen::kernel::Kernel quantised = plain;
      quantised.name = "mx";
      quantised.inputs[static_cast<size_t>(b)].mx = mx;
      const codegen::cuda::CudaModule module = codegen::cuda::emitModule({&plain, &quantised});
      const std::string name = fmt::format("{} {}", linear ? "linear" : "matmul", ir::mxFormatInfo(format).name);
      if (ir::mxHasScales(format)) {
        EXPECT_NE(module.source.find(codegen::cuda::mxTableName(format) + "["), std::string::npos) << name;
      }
      HostModule host(module.source, fmt::format("mx{}{}", linear, static_cast<int>(format)));
      auto run = [&](const std::string& kernel, const Tensor& weight) {
        Tensor out(ir::DType::F32, {M, N});
        out.fillBytes(0xff);
        std::vector<void*> pointers(2);
        pointers[static_cast<size_t>(plain.gemm->a)] = const_cast<std::byte*>(x.data());
        pointers[static_cast<size_t>(b)] = const_cast<std::byte*>(weight.data());
        pointers.push_back(out.data());
        std::vector<int64_t> extents = {1, M, N, K};
        std::vector<void*> args;
        for (void*& p : pointers) args.push_back(&p);
        for (int64_t& e : extents) args.push_back(&e);
        host.launch(kernel)(args.data(), 256);
        return out;
      };
      const Tensor want = run("plain", dequantised), got = run("mx", buffer);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << name;
      double largest = 0;
      for (int64_t i = 0; i < want.numel(); ++i) largest = std::max(largest, std::fabs(want.getDouble(i)));
      EXPECT_GT(largest, 0) << name;  // not a comparison of two zeros
      // ... and NVRTC compiles it for the architectures a package carries.
      for (const char* arch : {"sm_80", "sm_90"}) EXPECT_NO_THROW(codegen::cuda::compileModule(module.source, arch));
    }
  }
}

}  // namespace
}  // namespace graphc
