// cuda packages (docs/export.md): what `graphc export --device cuda`
// writes — the module's CUDA C++ exactly as the backend emits it, a cubin
// per architecture (checked in its ELF header) and the PTX — and what the
// compiler-free runtime does with it: refuses a module it would not make
// and, without a GPU, says so; on a GPU, every project graph's package
// runs bit for bit as the in-process compile does (the same source, the
// same NVRTC, the same cubin).
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

std::string text(std::span<const std::byte> bytes) { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }

/// The SM a cubin was compiled for, from its ELF header: EM_CUDA (190),
/// and in CUDA 13's ELF ABI (version 8) the SM number in e_flags' second
/// byte (0x50 for sm_80). -1 for anything else.
int cubinSm(const std::string& cubin) {
  if (cubin.size() < 64 || cubin.compare(0, 4, "\x7f" "ELF") != 0 || cubin[4] != 2 /* 64-bit */) return -1;
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
  std::vector<std::string> want = {"manifest.json", "graph.graph", "graph.json", "plan.json", "weights.safetensors",
                                   codegen::cuda::kExportedSource, codegen::cuda::kExportedPtx};
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

TEST(CudaExport, WeightsOtherThanF32AreRefusedBeforeCompiling) {
  const fs::path path = tempPath("mlp-mx.gcpkg");
  ExportOptions mx;
  mx.weights = "mxfp8";
  try {
    exportPackage(Graph::load(kMlp), path, onCuda(), mx);
    FAIL() << "exported MX weights for cuda";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--weights mxfp8: cuda packages hold f32 weights"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(path));
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
  EXPECT_NE(loadError(path).find("cuda/module.cu is not the module this runtime makes of its graph"),
            std::string::npos)
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
