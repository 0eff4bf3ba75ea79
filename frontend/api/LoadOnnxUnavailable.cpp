// A build without the ONNX importer (the GPU bundle): an ONNX path is one
// clear error.
#include <fmt/format.h>

#include "frontend/api/LoadModel.h"

namespace graphc::detail {

LoadedModel loadOnnx(const std::filesystem::path& file, const std::map<std::string, Tensor>&) {
  throw Error(
      fmt::format("{}: this graphc was built without the ONNX importer (no libonnx-dev at build time)", file.string()));
}

Tensor readTensorProto(const std::filesystem::path& file) {
  throw Error(fmt::format("{}: this graphc was built without ONNX support, which reads .pb tensors", file.string()));
}

std::map<std::string, Tensor> readTestDataInputs(const std::filesystem::path&, const std::filesystem::path& dataSet) {
  throw Error(fmt::format("{}: this graphc was built without ONNX support, which reads .pb tensors", dataSet.string()));
}

}  // namespace graphc::detail
