#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "runtime/Format.h"
#include "runtime/Npy.h"
#include "runtime/Random.h"
#include "tools/graphc/Commands.h"

namespace graphc::tools {

namespace {

/// --input NAME=VALUE, by name. A file's tensor is read once, here: an
/// ONNX import may specialise the graph on it.
struct GivenInputs {
  std::map<std::string, std::string> values;
  std::map<std::string, runtime::Tensor> tensors;
};

bool isRand(const std::string& v) { return v == "rand" || v.rfind("rand:", 0) == 0; }

GivenInputs readGivenInputs(const RunCommandOptions& options) {
  GivenInputs given;
  for (const std::string& item : options.inputs) {
    auto [name, value] = splitAssignment(item, "--input");
    if (!given.values.emplace(name, value).second) throw UsageError(fmt::format("--input {} is given twice", name));
    if (!isRand(value)) given.tensors[name] = graphc::readTensor(value);
  }
  return given;
}

/// Builds the entry graph's inputs from --input and --dim: files first
/// (their shapes bind symbolic sizes), then rand inputs. With no --input at
/// all, as trtexec does, every parameter gets rand:K (K its position) and a
/// symbolic size bound by nothing gets 1, each with a note, so any graph
/// runs as is; with some, a parameter left out is an error (a forgotten
/// input is not silently random).
std::vector<runtime::Tensor> buildInputs(const ir::Graph& g, GivenInputs& givenInputs,
                                         const RunCommandOptions& options) {
  std::map<std::string, std::string>& given = givenInputs.values;
  ir::SymbolBindings dims;
  for (const std::string& item : options.dims) {
    auto [name, value] = splitAssignment(item, "--dim");
    dims[name] = parseInt(value, "--dim " + name);
  }
  const auto& params = g.body.params();
  for (const auto& [name, value] : given) {
    bool known = false;
    for (const auto& p : params) known |= p->name == name;
    if (!known) throw UsageError(fmt::format("@{} has no parameter %{}", g.name, name));
  }
  if (!given.empty()) {
    std::vector<std::string> missing;
    for (const auto& p : params)
      if (!given.count(p->name)) missing.push_back("%" + p->name);
    if (!missing.empty())
      throw UsageError(
          fmt::format("no --input for {} (give every input, `--input NAME=rand` for a random one, or no "
                      "--input at all for random inputs)",
                      fmt::join(missing, ", ")));
  }
  std::vector<runtime::Tensor> inputs(params.size());
  std::vector<std::string> defaulted;
  for (size_t k = 0; k < params.size(); ++k) {
    auto it = given.find(params[k]->name);
    if (it == given.end()) {
      it = given.emplace(params[k]->name, fmt::format("rand:{}", k)).first;
      defaulted.push_back(fmt::format("%{}=rand:{}", params[k]->name, k));
    }
    if (!isRand(it->second)) {
      inputs[k] = givenInputs.tensors.at(it->first);
      // Symbols bound by a file's shape size the rand inputs too.
      if (inputs[k].rank() == params[k]->type.rank())
        for (int64_t d = 0; d < inputs[k].rank(); ++d)
          if (params[k]->type.shape[d].isSymbol()) dims.emplace(params[k]->type.shape[d].symbol, inputs[k].shape()[d]);
    }
  }
  if (!defaulted.empty())
    std::fprintf(stderr, "graphc: note: no --input for %s; using random inputs\n",
                 fmt::format("{}", fmt::join(defaulted, ", ")).c_str());
  std::vector<std::string> unsized;
  for (size_t k = 0; k < params.size(); ++k) {
    const std::string& value = given.at(params[k]->name);
    if (!isRand(value)) continue;
    uint64_t seed = value.size() > 5 ? static_cast<uint64_t>(parseInt(value.substr(5), "rand seed")) : 0;
    for (const ir::Dim& d : params[k]->type.shape)
      for (const std::string& s : ir::symbolsOf(d))
        if (dims.emplace(s, 1).second) unsized.push_back(s + "=1");
    ir::TensorType t = ir::substitute(params[k]->type, dims);
    inputs[k] = runtime::randomTensor(t.dtype, runtime::concreteShape(t), seed);
  }
  if (!unsized.empty())
    std::fprintf(stderr, "graphc: note: no --dim for %s; using size 1\n",
                 fmt::format("{}", fmt::join(unsized, ", ")).c_str());
  return inputs;
}

std::string summary(const runtime::Tensor& t) {
  if (t.numel() == 0 || t.dtype() == ir::DType::Bool) return "";
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.getDouble(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  return fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}", lo, hi, sum / static_cast<double>(t.numel()));
}

/// graphc bench: the wall time per call, after one warm-up call.
void bench(const graphc::Executable& exe, const std::vector<runtime::Tensor>& inputs,
           const RunCommandOptions& options) {
  exe.run(inputs);
  std::vector<double> ms;
  for (int k = 0; k < options.benchIters; ++k) {
    const auto start = std::chrono::steady_clock::now();
    exe.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("bench: %d runs on %s: median %.4f ms, min %.4f ms, max %.4f ms\n", options.benchIters,
              std::string(deviceName(options.compile.device)).c_str(), ms[ms.size() / 2], ms.front(), ms.back());
  if (!options.benchProfile) return;
  // Profiled runs apart from the timed ones: the clock reads per step are
  // not in the median above.
  runtime::StepProfile profile;
  RunOptions profiled;
  profiled.profile = &profile;
  for (int k = 0; k < options.benchIters; ++k) exe.run(inputs, profiled);
  if (profile.entries.empty()) {
    std::printf("profile: the %s device records no step times\n",
                std::string(deviceName(options.compile.device)).c_str());
    return;
  }
  std::vector<runtime::StepProfile::Entry> entries = profile.entries;
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  double total = 0;
  for (const auto& e : entries) total += e.seconds;
  const double runs = options.benchIters;
  std::printf("profile: %zu steps, %.4f ms per run in steps\n%10s %7s %6s  %s\n", entries.size(), total * 1e3 / runs,
              "ms/run", "share", "calls", "step");
  for (const auto& e : entries)
    std::printf("%10.4f %6.1f%% %6.3g  %s\n", e.seconds * 1e3 / runs, 100 * e.seconds / total,
                static_cast<double>(e.calls) / runs, e.step.c_str());
}

/// Prints (and saves) a run's outputs; one that updates an input in place
/// says which.
void report(const ir::Graph& g, const std::vector<runtime::Tensor>& outputs, const RunCommandOptions& options) {
  if (!options.saveOutputs.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.saveOutputs, ec);
    if (ec) throw ir::Error(fmt::format("{}: cannot create directory: {}", options.saveOutputs, ec.message()));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const runtime::Tensor& t = outputs[k];
    const ir::Value* updated = g.updatedParam(k);
    std::printf("output%zu: %s%s%s\n", k, ir::toString(t.type()).c_str(),
                updated ? fmt::format(" (updates %{})", updated->name).c_str() : "",
                options.printOutputs ? "" : summary(t).c_str());
    if (options.printOutputs) std::printf("%s\n", runtime::formatTensor(t).c_str());
    if (!options.saveOutputs.empty())
      runtime::writeNpy((std::filesystem::path(options.saveOutputs) / fmt::format("output{}.npy", k)).string(), t);
  }
}

/// run and bench of an exported package: loaded by the runtime (no
/// compiler), its inputs built from the graph it holds.
int runPackage(const RunCommandOptions& options, GivenInputs& given) {
  if (!options.compile.passes.empty() || options.compile.device != graphc::Device::Cpu)
    throw UsageError("a package runs as it was exported: --device and --passes do not apply to it");
  const auto start = std::chrono::steady_clock::now();
  const graphc::Executable exe = graphc::loadPackage(options.file);
  const double loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.timePasses) std::fprintf(stderr, "// load the package: %.3f ms\n", loadSeconds * 1e3);
  const std::vector<runtime::Tensor> inputs = buildInputs(exe.optimized().entry(), given, options);
  if (options.benchIters > 0) {
    bench(exe, inputs, options);
    return 0;
  }
  report(exe.optimized().entry(), exe.run(inputs), options);
  return 0;
}

}  // namespace

int runCommand(const RunCommandOptions& options) {
  return withErrorsReported([&] {
    GivenInputs given = readGivenInputs(options);
    if (std::filesystem::path(options.file).extension() == ".gcpkg") return runPackage(options, given);
    graphc::LoadedModel loaded = graphc::loadModel(options.file, given.tensors);
    // An ONNX model's inputs go by their ONNX names; those the import
    // specialised on their values are no longer parameters.
    for (const std::string& name : loaded.specialised) given.values.erase(name);
    for (const auto& [onnxName, param] : loaded.paramOfInput)
      if (onnxName != param && given.values.count(onnxName)) {
        given.values[param] = given.values.at(onnxName);
        given.values.erase(onnxName);
        if (given.tensors.count(onnxName)) given.tensors[param] = given.tensors.at(onnxName);
      }
    const std::vector<runtime::Tensor> inputs = buildInputs(loaded.graph.entry(), given, options);
    const graphc::Executable exe = graphc::compile(loaded.graph, options.compile);
    if (options.timePasses) std::fputs(exe.report().table().c_str(), stderr);
    if (options.benchIters > 0) {
      bench(exe, inputs, options);
      return 0;
    }
    report(exe.optimized().entry(), exe.run(inputs), options);
    return 0;
  });
}

}  // namespace graphc::tools
