#include "deploy/Weights.h"

#include <fmt/format.h>

#include "ir/Diagnostics.h"

namespace graphc::deploy {

namespace {

const std::pair<ir::DType, const char*> kNames[] = {
    {ir::DType::F16, "F16"}, {ir::DType::BF16, "BF16"}, {ir::DType::F32, "F32"}, {ir::DType::F64, "F64"},
    {ir::DType::I8, "I8"},   {ir::DType::I32, "I32"},   {ir::DType::I64, "I64"}, {ir::DType::Bool, "BOOL"}};

}  // namespace

std::string safetensorsDType(ir::DType t) {
  for (const auto& [dtype, name] : kNames)
    if (dtype == t) return name;
  return "?";
}

DenseToJson WeightsWriter::callback() {
  return [this](const ir::DenseElements& d) -> nlohmann::json {
    auto [it, added] = names_.emplace(&d, fmt::format("c{}", names_.size()));
    if (added)
      tensors_.push_back(
          {it->second, safetensorsDType(d.dtype), d.shape, std::span<const std::byte>(d.data, d.nbytes)});
    return it->second;
  };
}

std::string WeightsWriter::file() const { return runtime::writeSafetensors(tensors_); }

DenseFromJson weightsReader(const runtime::SafetensorsFile& weights, std::shared_ptr<const void> storage) {
  return [&weights, storage](const nlohmann::json& j) -> ir::Attribute {
    if (!j.is_string()) throw ir::Error("graph.json: a dense attribute does not name a tensor");
    const runtime::SafetensorsTensor* t = weights.find(j.get<std::string>());
    if (!t) throw ir::Error(fmt::format("graph.json: no tensor '{}' in weights.safetensors", j.get<std::string>()));
    for (const auto& [dtype, name] : kNames)
      if (t->dtype == name)  // parseSafetensors checked the byte count against the shape
        return ir::Attribute::ofDense(dtype, t->shape, storage, t->bytes.data(), t->bytes.size());
    throw ir::Error(
        fmt::format("weights.safetensors: tensor '{}' is {}, which graphc has no dtype for", t->name, t->dtype));
  };
}

}  // namespace graphc::deploy
