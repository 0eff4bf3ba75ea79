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
/// An ONNX test data set's inputs by graph input name.
std::map<std::string, Tensor> readTestDataInputs(const std::filesystem::path& model,
                                                 const std::filesystem::path& dataSet);

}  // namespace graphc::detail
