// Reading what a user hands graphc: a .graph file or a model, and input
// tensors. A `.onnx` path goes to the ONNX importer (LoadOnnx.cpp, or
// LoadOnnxUnavailable.cpp in a build without it).
#include <fmt/format.h>

#include "frontend/api/Api.h"
#include "frontend/api/LoadModel.h"
#include "frontend/parser/Parser.h"
#include "runtime/Npy.h"

namespace graphc {

namespace {
bool endsWith(const std::filesystem::path& p, std::string_view suffix) {
  const std::string s = p.string();
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

LoadedModel loadModel(const std::filesystem::path& file, const std::map<std::string, Tensor>& knownInputs) {
  if (endsWith(file, ".onnx")) return detail::loadOnnx(file, knownInputs);
  ir::DiagnosticEngine diags;
  auto m = frontend::parseFile(file.string(), diags);
  if (!m) throw CompileError(diags.all());
  return LoadedModel{Graph(std::move(m)), {}, {}};
}

Tensor readTensor(const std::filesystem::path& file) {
  if (endsWith(file, ".pb")) return detail::readTensorProto(file);
  return runtime::readNpy(file.string());
}

std::vector<Tensor> readTestDataInputs(const std::filesystem::path& model, const LoadedModel& loaded,
                                       const std::filesystem::path& dataSet) {
  std::map<std::string, Tensor> byName = detail::readTestDataInputs(model, dataSet);
  for (const auto& [onnxName, param] : loaded.paramOfInput)
    if (auto it = byName.find(onnxName); it != byName.end() && onnxName != param) byName.emplace(param, it->second);
  std::vector<Tensor> inputs;
  for (const auto& p : loaded.graph.entry().body.params()) {
    auto it = byName.find(p->name);
    if (it == byName.end()) throw Error(fmt::format("{}: no input_K.pb gives input {}", dataSet.string(), p->name));
    inputs.push_back(it->second);
  }
  return inputs;
}

}  // namespace graphc
