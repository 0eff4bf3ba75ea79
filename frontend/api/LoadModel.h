// What Load.cpp asks of the model importers (LoadOnnx.cpp where the ONNX
// importer is built, LoadOnnxUnavailable.cpp where it is not).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "frontend/api/Api.h"

namespace graphc::detail {

LoadedModel loadOnnx(const std::filesystem::path& file, const std::map<std::string, Tensor>& knownInputs);
/// An ONNX TensorProto (`.pb`) file.
Tensor readTensorProto(const std::filesystem::path& file);

}  // namespace graphc::detail
