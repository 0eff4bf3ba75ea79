// ONNX models and TensorProto tensors through the importer (frontend/onnx).
#include "frontend/api/LoadModel.h"
#include "frontend/onnx/OnnxImporter.h"
#include "runtime/FileIO.h"

namespace graphc::detail {

LoadedModel loadOnnx(const std::filesystem::path& file, const std::map<std::string, Tensor>& knownInputs) {
  ir::DiagnosticEngine diags;
  frontend::OnnxImportOptions options;
  options.knownInputs = knownInputs;
  frontend::OnnxImport imported = frontend::importOnnxFile(file.string(), diags, options);
  if (!imported.module) throw CompileError(diags.all());
  std::map<std::string, std::string> paramOfInput;
  const auto& params = imported.module->entry()->body.params();
  for (size_t k = 0; k < params.size(); ++k) paramOfInput[imported.inputNames[k]] = params[k]->name;
  return LoadedModel{Graph(std::move(imported.module)), std::move(paramOfInput), std::move(imported.specialised)};
}

Tensor readTensorProto(const std::filesystem::path& file) { return frontend::readTensorProtoFile(file.string()); }

std::map<std::string, Tensor> readTestDataInputs(const std::filesystem::path& model,
                                                 const std::filesystem::path& dataSet) {
  return frontend::readTestDataInputs(dataSet, frontend::onnxGraphInputs(runtime::readFile(model)));
}

}  // namespace graphc::detail
