// cuda packages (docs/export.md): what `graphc export --device cuda`
// writes — the module's CUDA C++ exactly as the backend emits it, a cubin
// per architecture (checked in its ELF header) and the PTX — and what the
// compiler-free runtime does with it: refuses a module it would not make
// and, without a GPU, says so; on a GPU, every project graph's package
// runs bit for bit as the in-process compile does (the same source, the
// same NVRTC, the same cubin).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ProjectGraphs.h"
#include "TestUtil.h"
#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "deploy/Package.h"
#include "frontend/api/graphc.h"
#include "runtime/FileIO.h"
#include "runtime/Random.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path tempPath(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("graphc-cuda-export-test-{}-{}", ::getpid(), name);
}

CompileOptions onCuda(const std::string& arch = "") {
  CompileOptions options;
  options.device = Device::Cuda;
  options.arch = arch;
  return options;
}

std::string text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// The SM a cubin was compiled for, from its ELF header: EM_CUDA (190),
/// and in CUDA 13's ELF ABI (version 8) the SM number in e_flags' second
/// byte (0x50 for sm_80). -1 for anything else.
int cubinSm(const std::string& cubin) {
  if (cubin.size() < 64 ||
      cubin.compare(0, 4,
                    "\x7f"
                    "ELF") != 0 ||
      cubin[4] != 2 /* 64-bit */)
    return -1;
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::memcpy(&machine, cubin.data() + 18, 2);
  std::memcpy(&flags, cubin.data() + 48, 4);
  if (machine != 190 || cubin[8] != 8 /* EI_ABIVERSION */) return -1;
  return static_cast<int>((flags >> 8) & 0xff);
}

std::string loadError(const fs::path& package) {
  try {
    loadPackage(package);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const fs::path kMlp = fs::path(GRAPHC_SOURCE_DIR) / "examples/mlp.graph";

TEST(CudaExport, PackageHoldsTheModuleACubinPerArchitectureAndPtx) {
  const Graph graph = Graph::load(kMlp);
  const fs::path path = tempPath("mlp.gcpkg");
  exportPackage(graph, path, onCuda());
  const deploy::Package p = deploy::Package::read(path);
  fs::remove(path);
  EXPECT_EQ(p.manifest()["device"], "cuda");
  EXPECT_EQ(p.manifest()["target"]["archs"], "sm_80 sm_90 sm_100 sm_120");
  EXPECT_EQ(p.manifest()["target"]["ptx"], "compute_80");
  EXPECT_EQ(p.manifest()["target"]["matmul"], "generated");
  EXPECT_EQ(text(p.entry(codegen::cuda::kExportedSource)), emit(graph, "cuda", onCuda()));
  std::vector<std::string> want = {"manifest.json",
                                   "graph.graph",
                                   "graph.json",
                                   "plan.json",
                                   "weights.safetensors",
                                   codegen::cuda::kExportedSource,
                                   codegen::cuda::kExportedPtx};
  for (const char* arch : codegen::cuda::kExportArchs) {
    const std::string cubin = text(p.entry(codegen::cuda::exportedCubin(arch)));
    EXPECT_EQ(cubinSm(cubin), std::atoi(arch + 3)) << arch;
    want.push_back(codegen::cuda::exportedCubin(arch));
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(p.entryNames(), want);
  EXPECT_NE(text(p.entry(codegen::cuda::kExportedPtx)).find("\n.target sm_80"), std::string::npos);
}

TEST(CudaExport, ArchGivesThatCubinAndItsPtx) {
  const fs::path path = tempPath("mlp-sm90.gcpkg");
  exportPackage(Graph::load(kMlp), path, onCuda("sm_90"));
  const deploy::Package p = deploy::Package::read(path);
  fs::remove(path);
  EXPECT_EQ(p.manifest()["target"]["archs"], "sm_90");
  EXPECT_EQ(cubinSm(text(p.entry("cuda/sm_90.cubin"))), 90);
  EXPECT_FALSE(p.has("cuda/sm_80.cubin"));
  EXPECT_NE(text(p.entry(codegen::cuda::kExportedPtx)).find("\n.target sm_90"), std::string::npos);
}

/// y = relu(linear(x, w, b)) with constant weights w [40, 70] written as
/// `dense<...>` (a weight, which --weights stores in its format), as
/// .graph text; `w` gives the weight's values.
std::string affineText(const std::vector<float>& w) {
  std::string hex = "0x";
  for (float v : w) {
    unsigned char bytes[4];
    std::memcpy(bytes, &v, 4);
    for (unsigned char b : bytes) hex += fmt::format("{:02X}", b);
  }
  return fmt::format(R"(graph @affine(%x: f32[B, 70]) -> (f32[B, 40]) {{
  %w = constant() {{value = dense<f32[40, 70], "{}">}} : f32[40, 70]
  %b = full() {{value = 0.25}} : f32[40]
  %h = linear(%x, %w, %b) : f32[B, 40]
  %y = relu(%h)
  return %y
}}
)",
                     hex);
}

std::vector<float> affineWeights() {
  std::vector<float> w(40 * 70);
  const Tensor r = runtime::randomTensor(ir::DType::F32, {40, 70}, 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = r.as<float>()[i] * std::ldexp(1.0f, static_cast<int>(i / 32 % 5) - 2);
  return w;
}

/// An MX package: the weight stored in mxfp4 (4.25 bits a value), the
/// module's GEMM reading it (the e2m1 table, the weight's buffer as bytes),
/// and the runtime emitting that very module from the graph it reads back
/// — without a GPU, loading then stops at the device; with one, the
/// package computes bit for bit what the in-process compile of the same
/// graph with the weight dequantised once computes.
TEST(CudaExport, MxWeightsAreReadByTheGemm) {
  const std::vector<float> w = affineWeights();
  const fs::path path = tempPath("affine-mx.gcpkg");
  ExportOptions mxfp4;
  mxfp4.weights = "mxfp4";
  exportPackage(Graph::parse(affineText(w)), path, onCuda(), mxfp4);
  const deploy::Package p = deploy::Package::read(path);
  EXPECT_EQ(p.manifest()["weights"]["format"], "mxfp4_e2m1");
  EXPECT_EQ(p.manifest()["weights"]["quantized_values"], 40 * 70);
  EXPECT_LT(p.entry("weights.safetensors").size(), 40u * 70 * 4 / 6);  // 4.25 bits, not 32
  const std::string module = text(p.entry(codegen::cuda::kExportedSource));
  EXPECT_NE(module.find("__device__ const unsigned gc_mx_e2m1[16]"), std::string::npos);
  EXPECT_NE(module.find("gc::mx_value(gc_mx_e2m1"), std::string::npos);
  EXPECT_NE(module.find("const unsigned char* in1"), std::string::npos);
  for (const char* arch : codegen::cuda::kExportArchs)
    EXPECT_GT(cubinSm(text(p.entry(codegen::cuda::exportedCubin(arch)))), 0) << arch;

  const std::string reason = codegen::cuda::noDeviceReason();
  if (!reason.empty()) {
    EXPECT_EQ(loadError(path), fmt::format("{}: no CUDA device: {}", path.string(), reason));
    fs::remove(path);
    return;
  }
  std::vector<uint8_t> elements(static_cast<size_t>(40 * ir::mxRowBytes(ir::MxFormat::E2M1, 70)));
  std::vector<uint8_t> scales(static_cast<size_t>(40 * ir::mxRowBlocks(70)));
  std::vector<float> dequantised(w.size());
  ir::mxQuantize(ir::MxFormat::E2M1, w.data(), 40, 70, elements.data(), scales.data());
  ir::mxDequantize(ir::MxFormat::E2M1, elements.data(), scales.data(), 70, 0, 40, dequantised.data());
  const Executable inProcess = compile(Graph::parse(affineText(dequantised)), onCuda());
  const Executable fromPackage = loadPackage(path);
  fs::remove(path);
  const std::vector<Tensor> inputs = {runtime::randomTensor(ir::DType::F32, {3, 70}, 4)};
  const Tensor got = fromPackage.run(inputs)[0], want = inProcess.run(inputs)[0];
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
}

TEST(CudaExport, AModuleThisRuntimeWouldNotEmitIsRefused) {
  const fs::path path = tempPath("mlp-altered.gcpkg");
  exportPackage(Graph::load(kMlp), path, onCuda("sm_90"));
  const deploy::Package p = deploy::Package::read(path);
  json manifest = p.manifest();
  std::vector<deploy::PackageEntry> entries;
  for (const auto& [name, info] : manifest["entries"].items()) {
    std::string bytes = text(p.entry(name));
    if (name == codegen::cuda::kExportedSource) bytes += "// changed\n";
    entries.push_back({name, bytes});
  }
  manifest.erase("entries");
  deploy::writePackage(path, manifest, entries);  // checksums recomputed: consistent, but not this runtime's module
  EXPECT_NE(loadError(path).find("cuda/module.cu is not the module this runtime makes of its graph"), std::string::npos)
      << loadError(path);
  fs::remove(path);
}

TEST(CudaExport, WithoutADeviceLoadingSaysSo) {
  const std::string reason = codegen::cuda::noDeviceReason();
  if (reason.empty()) GTEST_SKIP() << "there is a CUDA device (CudaPackage.RunsBitForBitAsCompiledInProcess runs)";
  const fs::path path = tempPath("mlp-nodevice.gcpkg");
  exportPackage(Graph::load(kMlp), path, onCuda());
  EXPECT_EQ(loadError(path), fmt::format("{}: no CUDA device: {}", path.string(), reason));
  fs::remove(path);
}

class CudaPackage : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaPackage, RunsBitForBitAsCompiledInProcess) {
  const std::string reason = codegen::cuda::noDeviceReason();
  if (!reason.empty()) GTEST_SKIP() << "no CUDA device: " << reason;
  const std::string param = GetParam();
  const size_t hash = param.rfind('#');
  const Graph graph = Graph::parse(
      testing::chunksOf(fs::path(GRAPHC_SOURCE_DIR) / param.substr(0, hash))[std::stoul(param.substr(hash + 1))],
      param);
  const Executable inProcess = compile(graph, onCuda());
  const fs::path path = tempPath("project.gcpkg");
  exportPackage(graph, path, onCuda(codegen::cuda::device().arch()));
  const Executable fromPackage = loadPackage(path);
  fs::remove(path);
  EXPECT_EQ(fromPackage.describe(), inProcess.describe());
  const std::vector<Tensor> inputs = testing::randomInputs(graph.entry(), 7);
  const std::vector<Tensor> got = fromPackage.run(inputs), want = inProcess.run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].type(), want[k].type()) << param << " output " << k;
    EXPECT_EQ(std::memcmp(got[k].data(), want[k].data(), want[k].nbytes()), 0) << param << " output " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(ExamplesAndLit, CudaPackage, ::testing::ValuesIn(testing::projectGraphs()),
                         [](const auto& info) { return testing::paramName(info.param); });

}  // namespace
}  // namespace graphc
