#include "tools/onnx/Conformance.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "frontend/api/Api.h"
#include "frontend/onnx/OnnxImporter.h"
#include "passes/PassManager.h"
#include "runtime/FileIO.h"
#include "runtime/reference/Interpreter.h"
#include "tests/support/Tolerance.h"

namespace graphc::onnxtest {

namespace fs = std::filesystem;

const char* backendName(Backend b) {
  switch (b) {
    case Backend::Reference: return "reference";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
    case Backend::Nvrtc: return "nvrtc";
  }
  return "";
}

std::vector<fs::path> testsOf(const fs::path& suiteDir) {
  std::vector<fs::path> tests;
  for (const fs::directory_entry& e : fs::directory_iterator(suiteDir))
    if (fs::exists(e.path() / "model.onnx")) tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());
  return tests;
}

namespace {

/// One test_data_set_N: inputs by graph input name, expected outputs in order.
struct DataSet {
  std::string name;
  std::map<std::string, runtime::Tensor> inputs;
  std::vector<runtime::Tensor> outputs;
};

/// The files prefix_0.pb, prefix_1.pb, ... of a data set, in order.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0;; ++k) {
    fs::path p = dir / fmt::format("{}_{}.pb", prefix, k);
    if (!fs::exists(p)) return files;
    files.push_back(p);
  }
}

std::vector<DataSet> readDataSets(const fs::path& testDir, const std::vector<std::string>& graphInputs) {
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(testDir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<DataSet> sets;
  for (const fs::path& dir : dirs) {
    DataSet set;
    set.name = dir.filename().string();
    set.inputs = frontend::readTestDataInputs(dir, graphInputs);
    for (const fs::path& p : numbered(dir, "output")) set.outputs.push_back(frontend::readTensorProtoFile(p.string()));
    sets.push_back(std::move(set));
  }
  return sets;
}

/// As numpy.testing.assert_allclose(want, got, rtol, atol) with NaNs
/// equal, which the ONNX backend runner uses; integers and bools exact.
std::string compare(const runtime::Tensor& got, const runtime::Tensor& want, size_t index, const RunOptions& options) {
  if (got.type() != want.type())
    return fmt::format("output {} is {}, expected {}", index, ir::toString(got.type()), ir::toString(want.type()));
  const bool exact = !ir::isFloat(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (exact) {
      if (got.getInt(i) != want.getInt(i))
        return fmt::format("output {} element {}: {} != {}", index, i, got.getInt(i), want.getInt(i));
      continue;
    }
    const double g = got.getDouble(i), w = want.getDouble(i);
    if (!testing::isClose(g, w, {options.rtol, options.atol}))
      return fmt::format("output {} element {}: {:.9g} vs expected {:.9g}", index, i, g, w);
  }
  return "";
}

/// The first line of an error, without the listing that follows it.
std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

/// The graph as the cuda backend's pipeline leaves it, for the NVRTC check:
/// the default pipeline without attention kernels, which only the cpu
/// backend runs (codegen::Backend::attentionKernels).
std::shared_ptr<const Graph> cudaPipelined(const ir::Module& module) {
  std::unique_ptr<ir::Module> m = ir::clone(module);
  passes::PassManager pm;
  passes::addDefaultPipeline(pm, {.attentionKernels = false});
  ir::DiagnosticEngine diags;
  if (!pm.run(*m, diags)) return nullptr;
  return std::make_shared<const Graph>(std::move(m));
}

std::vector<runtime::Tensor> runOn(Backend b, const ir::Module& module, const std::vector<runtime::Tensor>& inputs,
                                   TestResult& result) {
  if (b == Backend::Reference) return runtime::interpret(*module.entry(), inputs);
  Graph g(ir::clone(module));
  Executable exe = compile(g, {.device = b == Backend::Cpu ? Device::Cpu : Device::Cuda});
  if (b == Backend::Cpu) result.optimized = cudaPipelined(module);
  return exe.run(inputs);
}

}  // namespace

TestResult runTest(const fs::path& testDir, const std::string& suite, const RunOptions& options) {
  TestResult result;
  result.suite = suite;
  result.name = testDir.filename().string();
  std::string failure;  // a failure before any backend ran
  try {
    const std::string model = runtime::readFile(testDir / "model.onnx");
    result.unsupportedOps = frontend::unsupportedOnnxOps(model);
    if (!result.supported()) return result;
    {
      // What the import rejects as unsupported (an input's type, say) is
      // found before the test data, which may not be tensors then, is read.
      ir::DiagnosticEngine diags;
      frontend::OnnxImport plain = frontend::importOnnx(model, "model.onnx", diags, {.dataFolder = testDir.string()});
      if (!plain.module && !plain.unsupported.empty()) {
        result.unsupportedFeature = plain.unsupported.front();
        return result;
      }
    }
    std::vector<DataSet> sets = readDataSets(testDir, frontend::onnxGraphInputs(model));
    if (sets.empty()) throw ir::Error("no test_data_set_N folder");
    std::vector<Backend> backends{Backend::Reference, Backend::Cpu};
    if (options.cuda) backends.push_back(Backend::Cuda);
    for (Backend b : backends) result.failures[b] = "";
    for (const DataSet& set : sets) {
      // Imported per data set: inputs that must be known (a Reshape's
      // shape) specialise the graph on this set's values.
      ir::DiagnosticEngine diags;
      frontend::OnnxImport imported = frontend::importOnnx(model, (testDir / "model.onnx").string(), diags,
                                                           {.knownInputs = set.inputs, .dataFolder = testDir.string()});
      if (!imported.module) {
        if (!imported.unsupported.empty()) {
          result.unsupportedFeature = imported.unsupported.front();
          result.failures.clear();
          return result;
        }
        throw ir::Error("import: " + firstLine(diags.all().empty() ? "failed" : ir::format(diags.all().front())));
      }
      std::vector<runtime::Tensor> inputs;
      for (const std::string& name : imported.inputNames) {
        auto it = set.inputs.find(name);
        if (it == set.inputs.end()) throw ir::Error(fmt::format("{} has no value for input '{}'", set.name, name));
        inputs.push_back(it->second);
      }
      for (Backend b : backends) {
        std::string& why = result.failures[b];
        if (!why.empty()) continue;
        try {
          std::vector<runtime::Tensor> outputs = runOn(b, *imported.module, inputs, result);
          if (outputs.size() != set.outputs.size())
            why = fmt::format("{} outputs, {} expected", outputs.size(), set.outputs.size());
          for (size_t k = 0; why.empty() && k < outputs.size(); ++k)
            why = compare(outputs[k], set.outputs[k], k, options);
        } catch (const std::exception& e) {
          why = firstLine(e.what());
        }
        if (!why.empty() && sets.size() > 1) why = set.name + ": " + why;
      }
    }
  } catch (const frontend::OnnxUnsupported& e) {
    result.unsupportedFeature = e.feature;
    result.failures.clear();
  } catch (const std::exception& e) {
    failure = firstLine(e.what());
  }
  if (!failure.empty()) {
    result.failures.clear();
    result.failures[Backend::Reference] = failure;
    result.failures[Backend::Cpu] = failure;
    if (options.cuda) result.failures[Backend::Cuda] = failure;
  }
  return result;
}

}  // namespace graphc::onnxtest
