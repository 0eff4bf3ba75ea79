// Exported packages (docs/export.md): every model of the real-model suite
// exported and loaded back runs bit for bit as the in-process compile does
// (f32, both test data sets, the batch symbolic); a package's symbolic
// sizes stay symbolic; and every way a package can be damaged — truncated,
// a byte changed, an entry missing or added, another format version,
// another CPU, a plan or graph this runtime would not make — is a clear
// error from the loader, never a crash.
#include <zip.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/cpu/CpuExecutable.h"
#include "deploy/HostCpu.h"
#include "deploy/Loader.h"
#include "deploy/Package.h"
#include "frontend/api/graphc.h"
#include "runtime/FileIO.h"
#include "runtime/Random.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path tempPath(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("graphc-export-test-{}-{}", ::getpid(), name);
}

void expectBitwiseEqual(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].type(), want[k].type()) << what << " output " << k;
    EXPECT_EQ(std::memcmp(got[k].data(), want[k].data(), want[k].nbytes()), 0)
        << what << " output " << k << " differs from the in-process compile";
  }
}

class SuiteExport : public ::testing::TestWithParam<std::string> {};

TEST_P(SuiteExport, RunsBitForBitAsCompiledInProcess) {
  const fs::path dir = fs::path(GRAPHC_SOURCE_DIR) / "tests/models" / GetParam() / "dynamo-dynamic";
  const LoadedModel loaded = loadModel(dir / "model.onnx");
  const Executable inProcess = compile(loaded.graph);
  const fs::path package = tempPath(GetParam() + ".gcpkg");
  exportPackage(loaded.graph, package);
  const Executable fromPackage = loadPackage(package);
  fs::remove(package);
  EXPECT_EQ(fromPackage.describe(), inProcess.describe());
  for (const char* set : {"test_data_set_0", "test_data_set_1"}) {
    const std::vector<Tensor> inputs = readTestDataInputs(dir / "model.onnx", loaded, dir / set);
    expectBitwiseEqual(fromPackage.run(inputs), inProcess.run(inputs), GetParam() + " " + set);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SuiteExport,
                         ::testing::Values("bert", "convnext", "diffusion_block", "distilbert", "efficientnet_b0",
                                           "gpt2", "llama", "mobilenet_v3_small", "resnet18", "t5_encoder", "unet",
                                           "vit", "whisper_encoder"));

/// Each suite model's cuda package, f32 and mxfp4 (its linear and matmul
/// weights read by the GEMM as MX): the module the runtime emits for the
/// graph it reads back from graph.json must be byte for byte the one the
/// exporter compiled, else the runtime refuses the package. Without a GPU,
/// loading then stops at the device ("no CUDA device", which comes after
/// that check); with one, the f32 package runs bit for bit as the
/// in-process compile, the mxfp4 one as the cpu package of the same
/// weights does (to f32 accumulation order).
class SuiteCudaExport : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SuiteCudaExport, TheRuntimeEmitsTheExportedModule) {
  if (!codegen::hasBackend(Device::Cuda)) GTEST_SKIP() << "this build has no cuda backend";
  const auto& [model, weights] = GetParam();
  const fs::path dir = fs::path(GRAPHC_SOURCE_DIR) / "tests/models" / model / "dynamo-dynamic";
  const LoadedModel loaded = loadModel(dir / "model.onnx");
  const std::string noDevice = codegen::backendFor(Device::Cuda).unavailableReason();
  // One architecture where nothing runs it; on a GPU, every one (its own among them).
  const CompileOptions cuda{.device = Device::Cuda, .arch = noDevice.empty() ? "" : "sm_90"};
  const fs::path package = tempPath(model + "-" + weights + "-cuda.gcpkg");
  exportPackage(loaded.graph, package, cuda, {.weights = weights});
  if (weights != "f32") {  // its linear and matmul weights (unet has only convolutions, which stay f32 on cuda)
    const int64_t quantized = deploy::Package::read(package).manifest()["weights"]["quantized_values"];
    if (model == "unet")
      EXPECT_EQ(quantized, 0);
    else
      EXPECT_GT(quantized, 0);
  }
  if (!noDevice.empty()) {
    std::string error;
    try {
      loadPackage(package);
    } catch (const Error& e) {
      error = e.what();
    }
    fs::remove(package);
    EXPECT_EQ(error, package.string() + ": " + noDevice);
    return;
  }
  const Executable fromPackage = loadPackage(package);
  fs::remove(package);
  const std::vector<Tensor> inputs = readTestDataInputs(dir / "model.onnx", loaded, dir / "test_data_set_0");
  if (weights == "f32") {
    expectBitwiseEqual(fromPackage.run(inputs), compile(loaded.graph, {.device = Device::Cuda}).run(inputs),
                       model + " on cuda");
  } else {  // the cpu package of the same weights computes the same values (to f32 rounding)
    const fs::path cpuPackage = tempPath(model + "-" + weights + "-cpu.gcpkg");
    exportPackage(loaded.graph, cpuPackage, {}, {.weights = weights});
    const std::vector<Tensor> want = loadPackage(cpuPackage).run(inputs), got = fromPackage.run(inputs);
    fs::remove(cpuPackage);
    for (size_t k = 0; k < want.size(); ++k) {
      double largest = 1;
      for (int64_t i = 0; i < want[k].numel(); ++i) largest = std::max(largest, std::fabs(want[k].getDouble(i)));
      EXPECT_TRUE(testing::allClose(got[k], want[k], {1e-4, 1e-4 * largest})) << model << " output " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SuiteCudaExport,
                         ::testing::Combine(::testing::Values("bert", "convnext", "diffusion_block", "distilbert",
                                                              "efficientnet_b0", "gpt2", "llama", "mobilenet_v3_small",
                                                              "resnet18", "t5_encoder", "unet", "vit",
                                                              "whisper_encoder"),
                                            ::testing::Values("f32", "mxfp4")));

/// A package of examples/mlp.graph (the batch B symbolic), made once.
class DamagedPackage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new fs::path(tempPath("mlp.gcpkg"));
    exportPackage(Graph::load(fs::path(GRAPHC_SOURCE_DIR) / "examples/mlp.graph"), *path_);
    bytes_ = new std::string(runtime::readFile(*path_));
  }
  static void TearDownTestSuite() {
    fs::remove(*path_);
    delete path_;
    delete bytes_;
  }

  /// The loader's error for `bytes` as a package file.
  static std::string loadError(const std::string& bytes) {
    const fs::path damaged = tempPath("damaged.gcpkg");
    std::ofstream(damaged, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::string error;
    try {
      loadPackage(damaged);
    } catch (const Error& e) {
      error = e.what();
    }
    fs::remove(damaged);
    return error;
  }

  /// The package rewritten with `edit` applied to its entries (checksums
  /// recomputed: a consistent package that differs in content).
  static std::string rewritten(const std::function<void(json&, std::map<std::string, std::string>&)>& edit) {
    const deploy::Package p = deploy::Package::read(*path_);
    json manifest = p.manifest();
    std::map<std::string, std::string> entries;
    for (const auto& [name, info] : manifest["entries"].items()) {
      std::span<const std::byte> b = p.entry(name);
      entries[name] = std::string(reinterpret_cast<const char*>(b.data()), b.size());
    }
    manifest.erase("entries");
    edit(manifest, entries);
    std::vector<deploy::PackageEntry> list;
    for (auto& [name, b] : entries) list.push_back({name, b});
    const fs::path out = tempPath("rewritten.gcpkg");
    deploy::writePackage(out, manifest, list);
    std::string bytes = runtime::readFile(out);
    fs::remove(out);
    return bytes;
  }

  static fs::path* path_;
  static std::string* bytes_;
};
fs::path* DamagedPackage::path_ = nullptr;
std::string* DamagedPackage::bytes_ = nullptr;

TEST_F(DamagedPackage, SymbolicBatchStaysSymbolic) {
  const Executable exe = loadPackage(*path_);
  const Executable reference = compile(fs::path(GRAPHC_SOURCE_DIR) / "examples/mlp.graph");
  for (int64_t batch : {1, 2, 7}) {
    std::vector<Tensor> inputs;
    for (const auto& p : exe.optimized().entry().body.params()) {
      std::vector<int64_t> shape;
      for (const ir::Dim& d : p->type.shape) shape.push_back(d.isStatic() ? d.size : batch);
      Tensor t(p->type.dtype, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = static_cast<float>((i * 37 % 11) - 5) / 8;
      inputs.push_back(t);
    }
    const std::vector<Tensor> got = exe.run(inputs);
    ASSERT_EQ(got[0].shape(), (std::vector<int64_t>{batch, 4}));
    expectBitwiseEqual(got, reference.run(inputs), fmt::format("batch {}", batch));
  }
}

TEST_F(DamagedPackage, TruncatedIsRefused) {
  for (size_t keep :
       {size_t{0}, size_t{10}, bytes_->size() / 3, bytes_->size() / 2, bytes_->size() - 30, bytes_->size() - 1}) {
    const std::string error = loadError(bytes_->substr(0, keep));
    EXPECT_NE(error.find("damaged.gcpkg"), std::string::npos) << keep << ": " << error;
    EXPECT_FALSE(error.empty()) << "a package cut to " << keep << " bytes loaded";
  }
}

TEST_F(DamagedPackage, EveryChangedByteIsRefusedOrHarmless) {
  // A changed byte in an entry fails its checksum (the manifest's: its
  // CRC-32); one in the zip's records fails libzip's consistency checks,
  // except in fields nothing reads (a record's "version made by", say):
  // such a package must load and compute exactly what the original does.
  // Every 97th byte.
  const std::vector<Tensor> inputs = [] {
    std::vector<Tensor> out;
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{3, 16}, {32, 16}, {32}, {4, 32}, {4}}) {
      Tensor t(ir::DType::F32, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = static_cast<float>(i % 13) / 7 - 0.8f;
      out.push_back(t);
    }
    return out;
  }();
  const std::vector<Tensor> want = loadPackage(*path_).run(inputs);
  int refused = 0, harmless = 0;
  for (size_t at = 0; at < bytes_->size(); at += 97) {
    std::string damaged = *bytes_;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    if (!loadError(damaged).empty()) {
      ++refused;
      continue;
    }
    const fs::path file = tempPath("harmless.gcpkg");
    std::ofstream(file, std::ios::binary).write(damaged.data(), static_cast<std::streamsize>(damaged.size()));
    const Executable exe = loadPackage(file);
    fs::remove(file);
    expectBitwiseEqual(exe.run(inputs), want, fmt::format("byte {} changed", at));
    ++harmless;
  }
  EXPECT_GT(refused, 10 * harmless) << refused << " refused, " << harmless << " loaded";
}

TEST_F(DamagedPackage, ChangedEntryFailsItsChecksum) {
  // Entries are stored, so the last byte of the weights is in the file as is.
  const deploy::Package p = deploy::Package::read(*path_);
  const std::span<const std::byte> weights = p.entry("weights.safetensors");
  std::string damaged = *bytes_;
  const auto* begin = reinterpret_cast<const char*>(weights.data());
  const size_t offset =
      static_cast<size_t>(std::search(damaged.begin(), damaged.end(), begin, begin + weights.size()) - damaged.begin());
  ASSERT_LT(offset, damaged.size());
  damaged[offset + weights.size() - 1] ^= 1;
  const std::string error = loadError(damaged);
  EXPECT_NE(error.find("'weights.safetensors' does not match its checksum"), std::string::npos) << error;
}

TEST_F(DamagedPackage, OtherFormatVersionIsRefused) {
  // A consistent archive (CRCs right) whose manifest names another version.
  const deploy::Package p = deploy::Package::read(*path_);
  json manifest = p.manifest();
  manifest["format_version"] = 9;
  manifest["graphc_version"] = "9.0.0";
  const std::string text = manifest.dump(2);
  const fs::path other = tempPath("other-version.gcpkg");
  fs::copy_file(*path_, other, fs::copy_options::overwrite_existing);
  int error = 0;
  zip_t* z = zip_open(other.c_str(), 0, &error);
  ASSERT_NE(z, nullptr);
  zip_source_t* source = zip_source_buffer(z, text.data(), text.size(), 0);
  const zip_int64_t index = zip_name_locate(z, "manifest.json", 0);
  ASSERT_GE(index, 0);
  ASSERT_EQ(zip_file_replace(z, static_cast<zip_uint64_t>(index), source, 0), 0);
  zip_set_file_compression(z, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  ASSERT_EQ(zip_close(z), 0);
  const std::string bytes = runtime::readFile(other);
  fs::remove(other);
  const std::string message = loadError(bytes);
  EXPECT_NE(message.find("package format version 9 (made by graphc \"9.0.0\")"), std::string::npos) << message;
}

TEST_F(DamagedPackage, MissingOrExtraEntryIsRefused) {
  const std::string missing =
      rewritten([](json&, std::map<std::string, std::string>& e) { e.erase("cpu/kernels.so"); });
  EXPECT_NE(loadError(missing).find("no entry 'cpu/kernels.so'"), std::string::npos) << loadError(missing);
  // An entry added to the archive that the manifest does not list.
  const fs::path extra = tempPath("extra.gcpkg");
  fs::copy_file(*path_, extra, fs::copy_options::overwrite_existing);
  int error = 0;
  zip_t* z = zip_open(extra.c_str(), 0, &error);
  ASSERT_NE(z, nullptr);
  static const char kText[] = "not listed";
  zip_source_t* source = zip_source_buffer(z, kText, sizeof kText, 0);
  ASSERT_GE(zip_file_add(z, "extra.txt", source, 0), 0);
  zip_set_file_compression(z, zip_get_num_entries(z, 0) - 1, ZIP_CM_STORE, 0);
  ASSERT_EQ(zip_close(z), 0);
  const std::string added = runtime::readFile(extra);
  fs::remove(extra);
  EXPECT_NE(loadError(added).find("entry 'extra.txt' is not in the manifest"), std::string::npos) << loadError(added);
}

TEST_F(DamagedPackage, OtherMachineIsRefused) {
  const std::string arm = rewritten(
      [](json& m, std::map<std::string, std::string>&) { m["target"]["triple"] = "aarch64-unknown-linux-gnu"; });
  EXPECT_NE(loadError(arm).find("compiled for aarch64-unknown-linux-gnu"), std::string::npos) << loadError(arm);
  const std::string tpu = rewritten([](json& m, std::map<std::string, std::string>&) { m["device"] = "tpu"; });
  EXPECT_NE(loadError(tpu).find("a package for device \"tpu\" (this runtime runs cpu and cuda packages)"),
            std::string::npos)
      << loadError(tpu);
  // A cpu package called a cuda one has no module the cuda runtime would make.
  const std::string cuda = rewritten([](json& m, std::map<std::string, std::string>&) { m["device"] = "cuda"; });
  EXPECT_NE(loadError(cuda).find("cuda/module.cu is not the module this runtime makes"), std::string::npos)
      << loadError(cuda);
}

/// A package whose target names a CPU feature this CPU lacks is refused by
/// name, and so is one naming a feature the loader has never heard of
/// (failing closed: it cannot tell whether the kernels use it).
TEST_F(DamagedPackage, CpuFeatureMissingOrUnknownIsRefused) {
  std::string lacking;  // AMD's XOP and FMA4 left with Bulldozer; Intel never had them
  for (const char* f : {"xop", "fma4", "tbm", "avx512er", "avx5124vnniw", "avx512vp2intersect", "sse4a"})
    if (deploy::hostHasCpuFeature(f) == false) {
      lacking = f;
      break;
    }
  ASSERT_FALSE(lacking.empty()) << "this CPU has every feature of the list";
  const auto withFeature = [&](const std::string& f) {
    return rewritten([&](json& m, std::map<std::string, std::string>&) {
      m["target"]["features"] = m["target"]["features"].get<std::string>() + ",+" + f;
    });
  };
  const std::string missing = loadError(withFeature(lacking));
  EXPECT_NE(missing.find("this CPU lacks " + lacking), std::string::npos) << missing;
  const std::string unknown = loadError(withFeature("avx512-unheard-of"));
  EXPECT_NE(unknown.find("with avx512-unheard-of, which this loader cannot check"), std::string::npos) << unknown;
  // What the exporter records on this machine loads here: every feature of
  // LLVM's host map is one the loader accounts for.
  EXPECT_TRUE(deploy::hostHasCpuFeature("sse2").value_or(false));
  EXPECT_TRUE(deploy::hostHasCpuFeature("64bit").value_or(false));
  EXPECT_FALSE(deploy::hostHasCpuFeature("avx512-unheard-of").has_value());
}

TEST_F(DamagedPackage, PlanOrGraphThisRuntimeWouldNotMakeIsRefused) {
  const std::string plan = rewritten([](json&, std::map<std::string, std::string>& e) {
    json p = json::parse(e["plan.json"]);
    p["plan"]["arena_bytes"] = "12345";
    e["plan.json"] = p.dump();
  });
  EXPECT_NE(loadError(plan).find("its step plan is not the one this runtime makes"), std::string::npos)
      << loadError(plan);
  const std::string kernels = rewritten([](json&, std::map<std::string, std::string>& e) {
    json p = json::parse(e["plan.json"]);
    p["kernels"][0]["ir_xxh3_64"] = "0000000000000000";
    e["plan.json"] = p.dump();
  });
  EXPECT_NE(loadError(kernels).find("kernel table does not match"), std::string::npos) << loadError(kernels);
  const std::string op = rewritten([](json&, std::map<std::string, std::string>& e) {
    json g = json::parse(e["graph.json"]);
    g["body"]["nodes"][0]["op"] = "no_such_op";
    e["graph.json"] = g.dump();
  });
  EXPECT_NE(loadError(op).find("unknown op 'no_such_op'"), std::string::npos) << loadError(op);
  const std::string id = rewritten([](json&, std::map<std::string, std::string>& e) {
    json g = json::parse(e["graph.json"]);
    g["body"]["nodes"][0]["operands"][0] = 999;
    e["graph.json"] = g.dump();
  });
  EXPECT_NE(loadError(id).find("a value id that names no earlier value"), std::string::npos) << loadError(id);
  const std::string weights = rewritten(
      [](json&, std::map<std::string, std::string>& e) { e["weights.safetensors"] = std::string(8, '\xff'); });
  EXPECT_NE(loadError(weights).find("weights.safetensors: safetensors: a header of"), std::string::npos)
      << loadError(weights);
}

// A result that updates an input in place is part of the package's graph:
// the loaded Executable writes the caller's tensor as the compile did.
TEST(PackageInputUpdates, AnUpdateSurvivesExportAndLoad) {
  const Graph g = Graph::parse(R"(
    graph @sgd(%w: f32[B, 3], %m: f32[B, 3], %g: f32[B, 3]) -> (f32[B, 3] updates %w, f32[B, 3] updates %m, f32[]) {
      %mm = mul(%m, 0.9)
      %m2 = add(%mm, %g)
      %step = mul(%m2, 0.1)
      %w2 = sub(%w, %step)
      %n = sum(%w2)
      return %w2, %m2, %n
    })");
  const fs::path package = tempPath("input-updates.gcpkg");
  exportPackage(g, package);
  const Executable loaded = loadPackage(package);
  fs::remove(package);
  ASSERT_EQ(loaded.optimized().entry().inputUpdates.size(), 2u);
  auto inputs = [] {
    std::vector<Tensor> in;
    for (uint64_t k = 0; k < 3; ++k) in.push_back(runtime::randomTensor(DType::F32, {5, 3}, 40 + k));
    return in;
  };
  std::vector<Tensor> viaPackage = inputs(), inProcess = inputs();
  const Executable compiled = compile(g);
  for (int step = 0; step < 3; ++step) {
    std::vector<Tensor> a = loaded.run(viaPackage), b = compiled.run(inProcess);
    EXPECT_EQ(a[0].data(), viaPackage[0].data());
    EXPECT_EQ(a[1].data(), viaPackage[1].data());
    expectBitwiseEqual(a, b, fmt::format("step {}", step));
  }
  expectBitwiseEqual(viaPackage, inProcess, "the updated inputs");
}

// graph.json's input updates are checked as the text's are: a pair that is
// not [result, parameter], or one the verifier refuses, fails the load.
TEST_F(DamagedPackage, InputUpdatesThatDoNotFitAreRefused) {
  auto withUpdates = [&](json updates) {
    return loadError(rewritten([&](json&, std::map<std::string, std::string>& e) {
      json g = json::parse(e["graph.json"]);
      g["updates"] = updates;
      e["graph.json"] = g.dump();
    }));
  };
  for (const json& bad : {json::parse("[[0, 99]]"), json::parse("[[-1, 0]]"), json::parse("[[0]]")}) {
    const std::string error = withUpdates(bad);
    EXPECT_NE(error.find("an input update that is not [result, parameter]"), std::string::npos) << bad << ": " << error;
  }
  const std::string mismatch = withUpdates(json::parse("[[0, 0]]"));  // f32[B, 4] cannot update %x: f32[B, 16]
  EXPECT_NE(mismatch.find("the types must match"), std::string::npos) << mismatch;
}

// Two packages loaded at once each run their own kernels (their shared
// objects are opened under names that cannot collide).
TEST(PackagesAtOnce, EachRunsItsOwnKernels) {
  const fs::path mlp = tempPath("at-once-mlp.gcpkg"), affine = tempPath("at-once-affine.gcpkg");
  exportPackage(Graph::load(fs::path(GRAPHC_SOURCE_DIR) / "examples/mlp.graph"), mlp);
  exportPackage(Graph::load(fs::path(GRAPHC_SOURCE_DIR) / "tests/deploy/affine.graph"), affine);
  const Executable first = loadPackage(mlp);
  const Executable second = loadPackage(affine);
  const Executable third = loadPackage(mlp);
  fs::remove(mlp);
  fs::remove(affine);
  Tensor x(ir::DType::F32, {2, 3});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>(i) - 2;
  const Executable affineReference = compile(fs::path(GRAPHC_SOURCE_DIR) / "tests/deploy/affine.graph");
  expectBitwiseEqual(second.run({x}), affineReference.run({x}), "affine beside mlp");
  std::vector<Tensor> in;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 16}, {32, 16}, {32}, {4, 32}, {4}}) {
    Tensor t(ir::DType::F32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = static_cast<float>(i % 7) / 5 - 0.6f;
    in.push_back(t);
  }
  expectBitwiseEqual(first.run(in), third.run(in), "two loads of one package");
  expectBitwiseEqual(first.run(in), compile(fs::path(GRAPHC_SOURCE_DIR) / "examples/mlp.graph").run(in), "mlp");
}

// A GEMM weight that is also returned (or read by any other step) stays
// f32: the runtime refuses an MX constant anywhere but as a GEMM's weight.
TEST(MxExport, OnlyWeightsNothingElseReadsAreQuantised) {
  std::string hex;
  for (int i = 0; i < 32 * 64; ++i) {
    const float v = static_cast<float>((i * 7919) % 257) / 64 - 2;
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int b = 0; b < 4; ++b) hex += fmt::format("{:02X}", (bits >> (8 * b)) & 0xff);
  }
  auto graph = [&](bool returned) {
    return Graph::parse(
        fmt::format("graph @f(%x: f32[B, 64]) -> (f32[B, 32]{}) {{\n"
                    "  %w = constant() {{value = dense<f32[32, 64], \"0x{}\">}} : f32[32, 64]\n"
                    "  %h = linear(%x, %w) : f32[B, 32]\n  %y = relu(%h)\n  return %y{}\n}}\n",
                    returned ? ", f32[32, 64]" : "", hex, returned ? ", %w" : ""));
  };
  for (bool returned : {false, true}) {
    const fs::path package = tempPath("returned.gcpkg");
    exportPackage(graph(returned), package, {}, {.weights = "mxfp4"});
    const deploy::Package p = deploy::Package::read(package);
    EXPECT_EQ(p.manifest()["weights"]["quantized_values"], returned ? 0 : 32 * 64) << returned;
    Tensor x(ir::DType::F32, {3, 64});
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = static_cast<float>(i % 5) - 2;
    const std::vector<Tensor> out = loadPackage(package).run({x});
    fs::remove(package);
    EXPECT_EQ(out.size(), returned ? 2u : 1u);
  }
  EXPECT_THROW(exportPackage(graph(false), tempPath("bad.gcpkg"), {}, {.weights = "int3"}), Error);
}

TEST_F(DamagedPackage, NotAPackageIsRefused) {
  EXPECT_NE(loadError("graph @f() -> () { return }").find("not a graphc package"), std::string::npos);
  std::string error;
  try {
    loadPackage("/nonexistent/model.gcpkg");
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("/nonexistent/model.gcpkg"), std::string::npos) << error;
}

}  // namespace
}  // namespace graphc

namespace graphc {
namespace {

/// `m`'s MX weights replaced by their values, dequantised once.
std::unique_ptr<ir::Module> dequantized(const ir::Module& m) {
  std::unique_ptr<ir::Module> out = ir::clone(m);
  for (const auto& n : out->entry()->body.nodes()) {
    const ir::Attribute* value = n->attrs.find("value");
    if (n->op != ir::OpId::Constant || !value || value->kind != ir::Attribute::Kind::Dense || !value->dense->mx)
      continue;
    const ir::MxWeights& mx = *value->dense->mx;
    auto values = std::make_shared<std::vector<float>>(static_cast<size_t>(mx.rows * mx.cols));
    mx.dequantize(0, mx.rows, values->data());
    if (mx.transposed) {  // stored [n, k], the constant [k, n]
      std::vector<float> stored = *values;
      for (int64_t r = 0; r < mx.rows; ++r)
        for (int64_t c = 0; c < mx.cols; ++c)
          (*values)[static_cast<size_t>(c * mx.rows + r)] = stored[static_cast<size_t>(r * mx.cols + c)];
    }
    n->attrs.set("value", ir::Attribute::ofDense(ir::DType::F32, value->dense->shape, values,
                                                 reinterpret_cast<const std::byte*>(values->data()),
                                                 values->size() * sizeof(float)));
  }
  return out;
}

struct MxCase {
  std::string model, format;
};

class SuiteMxExport : public ::testing::TestWithParam<MxCase> {};

// An MX package's GEMMs dequantise their weights on every call; the result
// must be what the same kernels compute with those weights dequantised once
// and packed at load (the f32 path) — bit for bit — and close to the f32
// model's (the tolerances of docs/export.md).
TEST_P(SuiteMxExport, RunsAsItsDequantisedWeightsDo) {
  const auto& [model, format] = GetParam();
  const fs::path dir = fs::path(GRAPHC_SOURCE_DIR) / "tests/models" / model / "dynamo-dynamic";
  const LoadedModel loaded = loadModel(dir / "model.onnx");
  const fs::path package = tempPath(model + "-" + format + ".gcpkg");
  exportPackage(loaded.graph, package, {}, {.weights = format});
  deploy::LoadedPackage mx = deploy::loadPackage(package);
  fs::remove(package);
  int quantized = 0;
  for (const auto& n : mx.module->entry()->body.nodes())
    if (const ir::Attribute* v = n->attrs.find("value"); v && v->kind == ir::Attribute::Kind::Dense && v->dense->mx)
      ++quantized;
  EXPECT_GT(quantized, 0) << "no weight of " << model << " was quantised";
  const std::unique_ptr<ir::Module> plain = dequantized(*mx.module);
  const std::unique_ptr<runtime::Executable> reference = codegen::cpu::compileGraph(*plain->entry());
  const Executable f32 = compile(loaded.graph);
  const std::vector<Tensor> inputs = readTestDataInputs(dir / "model.onnx", loaded, dir / "test_data_set_0");
  const std::vector<Tensor> got = mx.executable->run(inputs, {});
  expectBitwiseEqual(got, reference->run(inputs, {}), model + " " + format);
  const std::vector<Tensor> exact = f32.run(inputs);
  double maxError = 0, maxMagnitude = 0;
  for (size_t k = 0; k < exact.size(); ++k)
    for (int64_t i = 0; i < exact[k].numel(); ++i) {
      maxError = std::max(maxError, std::fabs(got[k].getDouble(i) - exact[k].getDouble(i)));
      maxMagnitude = std::max(maxMagnitude, std::fabs(exact[k].getDouble(i)));
    }
  // docs/export.md's tolerances: the largest error against the f32 model,
  // relative to the largest output (measured: ≤ 0.06 for mxfp8 and mxfp6,
  // ≤ 0.37 for mxfp4 on these models, whose weights are random; bf16 and
  // f16 far less).
  const double tolerance = format == "mxfp4" ? 0.5 : format == "f16" ? 0.002 : format == "bf16" ? 0.02 : 0.1;
  EXPECT_LE(maxError, tolerance * maxMagnitude) << model << " " << format;
  std::printf("%s %s: %d weights stored so, max error %.4g (outputs up to %.4g)\n", model.c_str(), format.c_str(),
              quantized, maxError, maxMagnitude);
  mx.executable.reset();
}

std::vector<MxCase> mxCases() {
  std::vector<MxCase> cases;
  for (const char* model : {"bert", "convnext", "diffusion_block", "distilbert", "efficientnet_b0", "gpt2", "llama",
                            "mobilenet_v3_small", "resnet18", "t5_encoder", "unet", "vit", "whisper_encoder"})
    for (const char* format : {"mxfp8", "mxfp6", "mxfp4", "bf16", "f16"}) cases.push_back({model, format});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Models, SuiteMxExport, ::testing::ValuesIn(mxCases()),
                         [](const ::testing::TestParamInfo<MxCase>& info) {
                           return info.param.model + "_" + info.param.format;
                         });

// An embedding table (1000 rows of 70: two full blocks and a partial one;
// 70,000 values, past the 2^16 a gathered table needs) tied to the output
// projection (a linear's weight): stored once in the format, its gather's
// kernel decodes the rows it reads and the GEMM packs it as any weight —
// bit for bit what the graph with the table dequantised once computes, the
// gathered rows and the logits. (An op calling vector math after the
// gather, tanh say, may round an ulp apart: the decoding loop vectorises
// differently, and libmvec and libm differ.) A table of fewer values stays
// f32, as cuda packages keep every gathered table (their gathers read f32).
TEST(MxExport, AnEmbeddingTableIsDecodedInItsGather) {
  auto lm = [](int64_t vocab) {
    std::string hex;
    for (int64_t i = 0; i < vocab * 70; ++i) {
      const float v = std::ldexp(static_cast<float>((i * 7919) % 257) / 64 - 2, static_cast<int>((i / 32) % 7) - 3);
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int b = 0; b < 4; ++b) hex += fmt::format("{:02X}", (bits >> (8 * b)) & 0xff);
    }
    return Graph::parse(
        fmt::format("graph @lm(%ids: i64[N]) -> (f32[N, {0}], f32[N, 70]) {{\n"
                    "  %table = constant() {{value = dense<f32[{0}, 70], \"0x{1}\">}} : f32[{0}, 70]\n"
                    "  %e = index_select(%table, %ids) {{dim = 0}} : f32[N, 70]\n"
                    "  %h = relu(%e)\n"
                    "  %logits = linear(%h, %table) : f32[N, {0}]\n"
                    "  return %logits, %h\n}}\n",
                    vocab, hex));
  };
  const Graph graph = lm(1000);
  Tensor ids(ir::DType::I64, {6});
  for (int64_t i = 0; i < 6; ++i) ids.as<int64_t>()[i] = (i * 367) % 1000;
  for (const char* format : {"mxfp4", "mxfp6_e3m2", "mxfp8_e5m2", "bf16", "f16"}) {
    const fs::path package = tempPath(std::string("embedding-") + format + ".gcpkg");
    exportPackage(graph, package, {}, {.weights = format});
    EXPECT_EQ(deploy::Package::read(package).manifest()["weights"]["quantized_values"], 1000 * 70) << format;
    deploy::LoadedPackage mx = deploy::loadPackage(package);
    fs::remove(package);
    const std::unique_ptr<ir::Module> plain = dequantized(*mx.module);
    const std::vector<Tensor> got = mx.executable->run({ids}, {});
    const std::vector<Tensor> want = codegen::cpu::compileGraph(*plain->entry())->run({ids}, {});
    expectBitwiseEqual(got, want, format);
    EXPECT_NE(want[0].getDouble(0), 0.0) << format;
  }
  const fs::path small = tempPath("embedding-small.gcpkg");
  exportPackage(lm(100), small, {}, {.weights = "mxfp4"});
  EXPECT_EQ(deploy::Package::read(small).manifest()["weights"]["quantized_values"], 0);
  fs::remove(small);
  if (codegen::hasBackend(Device::Cuda)) {
    const fs::path package = tempPath("embedding-cuda.gcpkg");
    exportPackage(graph, package, {.device = Device::Cuda, .arch = "sm_90"}, {.weights = "mxfp4"});
    EXPECT_EQ(deploy::Package::read(package).manifest()["weights"]["quantized_values"], 0);
    fs::remove(package);
  }
}

}  // namespace
}  // namespace graphc
