// What every subcommand reads: a .graph file, or an ONNX model imported
// into the same IR; and input tensors from .npy or ONNX TensorProto (.pb)
// files.
#include <fmt/format.h>

#include "frontend/Parser.h"
#include "runtime/Npy.h"
#include "tools/graphc/Commands.h"
#ifdef GRAPHC_HAS_ONNX
#include "frontend/onnx/OnnxImporter.h"
#endif

namespace graphc::tools {

bool isOnnxFile(const std::string& path) { return path.size() >= 5 && path.substr(path.size() - 5) == ".onnx"; }

LoadedModule loadModule(const std::string& file, ir::DiagnosticEngine& diags,
                        const std::map<std::string, runtime::Tensor>& knownInputs) {
  LoadedModule loaded;
  if (!isOnnxFile(file)) {
    loaded.module = frontend::parseFile(file, diags);
    return loaded;
  }
#ifdef GRAPHC_HAS_ONNX
  frontend::OnnxImportOptions options;
  options.knownInputs = knownInputs;
  frontend::OnnxImport imported = frontend::importOnnxFile(file, diags, options);
  if (imported.module) {
    const auto& params = imported.module->entry()->body.params();
    for (size_t k = 0; k < params.size(); ++k) loaded.paramOfInput[imported.inputNames[k]] = params[k]->name;
  }
  loaded.module = std::move(imported.module);
  loaded.specialised = std::move(imported.specialised);
#else
  (void)knownInputs;
  diags.error({}, fmt::format("{}: this graphc was built without the ONNX importer (no libonnx-dev at build time)", file));
#endif
  return loaded;
}

runtime::Tensor readTensorFile(const std::string& path) {
  if (path.size() >= 3 && path.substr(path.size() - 3) == ".pb") {
#ifdef GRAPHC_HAS_ONNX
    return frontend::readTensorProtoFile(path);
#else
    throw ir::Error(fmt::format("{}: this graphc was built without ONNX support, which reads .pb tensors", path));
#endif
  }
  return runtime::readNpy(path);
}

}  // namespace graphc::tools
