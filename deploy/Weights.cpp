#include "deploy/Weights.h"

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "ir/SizeMath.h"

namespace graphc::deploy {

namespace {

const std::pair<ir::DType, const char*> kNames[] = {
    {ir::DType::F16, "F16"}, {ir::DType::BF16, "BF16"}, {ir::DType::F32, "F32"}, {ir::DType::F64, "F64"},
    {ir::DType::I8, "I8"},   {ir::DType::I32, "I32"},   {ir::DType::I64, "I64"}, {ir::DType::Bool, "BOOL"}};

const runtime::SafetensorsTensor& tensorNamed(const runtime::SafetensorsFile& weights, const nlohmann::json& name,
                                              const char* dtype) {
  if (!name.is_string()) throw ir::Error("graph.json: an MX weight does not name its tensors");
  const runtime::SafetensorsTensor* t = weights.find(name.get<std::string>());
  if (!t) throw ir::Error(fmt::format("graph.json: no tensor '{}' in weights.safetensors", name.get<std::string>()));
  if (t->dtype != dtype)
    throw ir::Error(fmt::format("weights.safetensors: tensor '{}' is {}, not {}", t->name, t->dtype, dtype));
  return *t;
}

/// {"mx": format, "elements": name, "scales": name, "shape": [...]}: an f32
/// weight of that shape held in an MX format, its sizes checked.
ir::Attribute mxWeight(const nlohmann::json& j, const runtime::SafetensorsFile& weights,
                       std::shared_ptr<const void> storage) {
  const auto format =
      j.contains("mx") && j["mx"].is_string() ? ir::parseMxFormat(j["mx"].get<std::string>()) : std::nullopt;
  if (!format || !j.contains("shape") || !j["shape"].is_array() || j["shape"].empty() || !j.contains("elements") ||
      j.contains("scales") != ir::mxHasScales(*format))
    throw ir::Error("graph.json: an MX weight needs a format, its tensors and a shape");
  std::vector<int64_t> shape;
  int64_t numel = 1;
  for (const nlohmann::json& d : j["shape"]) {
    if (!d.is_number_unsigned()) throw ir::Error("graph.json: an MX weight's shape is not sizes");
    shape.push_back(d.get<int64_t>());
    numel = ir::checkedMul(numel, shape.back(), "an MX weight's element count");
  }
  if (numel > (int64_t{1} << 48)) throw ir::Error("graph.json: an MX weight larger than any machine's memory");
  auto mx = std::make_shared<ir::MxWeights>();
  mx->format = *format;
  mx->transposed = j.contains("transposed") && j["transposed"].is_boolean() && j["transposed"].get<bool>();
  if (mx->transposed && shape.size() != 2) throw ir::Error("graph.json: a transposed MX weight that is not a matrix");
  mx->rows = mx->transposed ? shape[1] : shape[0];
  mx->cols = mx->rows ? numel / mx->rows : 0;
  const runtime::SafetensorsTensor& elements = tensorNamed(weights, j["elements"], "U8");
  const runtime::SafetensorsTensor* scales =
      ir::mxHasScales(*format) ? &tensorNamed(weights, j["scales"], "F8_E8M0") : nullptr;
  const int64_t wantScales = scales ? ir::checkedMul(mx->rows, ir::mxRowBlocks(mx->cols), "MX scales") : 0;
  if (static_cast<int64_t>(elements.bytes.size()) !=
          ir::checkedMul(mx->rows, ir::mxRowBytes(*format, mx->cols), "MX bytes") ||
      (scales ? static_cast<int64_t>(scales->bytes.size()) : 0) != wantScales)
    throw ir::Error(fmt::format("weights.safetensors: '{}' does not hold a {} weight of {} values", elements.name,
                                ir::mxFormatInfo(*format).name, numel));
  mx->elements = elements.bytes;
  if (scales) mx->scales = scales->bytes;
  mx->owner = std::move(storage);
  return ir::Attribute::ofMx(std::move(shape), std::move(mx));
}

}  // namespace

std::string safetensorsDType(ir::DType t) {
  for (const auto& [dtype, name] : kNames)
    if (dtype == t) return name;
  return "?";
}

DenseToJson WeightsWriter::callback() {
  return [this](const ir::DenseElements& d) -> nlohmann::json {
    auto [it, added] = names_.emplace(&d, fmt::format("c{}", names_.size()));
    const std::string& name = it->second;
    auto chosen = quantize_.find(&d);
    if (chosen == quantize_.end()) {
      if (added)
        tensors_.push_back({name, safetensorsDType(d.dtype), d.shape, std::span<const std::byte>(d.data, d.nbytes)});
      return name;
    }
    const bool transposed = chosen->second;
    if (added) {  // quantised once, however many nodes share the constant
      int64_t rows = d.shape.at(0), cols = rows ? d.numel() / rows : 0;
      std::vector<float> transposedValues;
      const auto* values = reinterpret_cast<const float*>(d.data);
      if (transposed) {  // [k, n] stored as [n, k]
        transposedValues.resize(static_cast<size_t>(d.numel()));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) transposedValues[static_cast<size_t>(c * rows + r)] = values[r * cols + c];
        values = transposedValues.data();
        std::swap(rows, cols);
      }
      std::vector<uint8_t>* elements = quantized_
                                           .emplace_back(std::make_unique<std::vector<uint8_t>>(
                                               static_cast<size_t>(rows * ir::mxRowBytes(format_, cols))))
                                           .get();
      const int64_t blocks = ir::mxHasScales(format_) ? ir::mxRowBlocks(cols) : 0;
      std::vector<uint8_t>* scales =
          quantized_.emplace_back(std::make_unique<std::vector<uint8_t>>(static_cast<size_t>(rows * blocks))).get();
      ir::mxQuantize(format_, values, rows, cols, elements->data(), scales->data());
      tensors_.push_back(
          {name + ".elements", "U8", {rows, ir::mxRowBytes(format_, cols)}, std::as_bytes(std::span(*elements))});
      if (blocks) tensors_.push_back({name + ".scales", "F8_E8M0", {rows, blocks}, std::as_bytes(std::span(*scales))});
    }
    nlohmann::json ref = {{"mx", ir::mxFormatInfo(format_).name},
                          {"elements", name + ".elements"},
                          {"transposed", transposed},
                          {"shape", d.shape}};
    if (ir::mxHasScales(format_)) ref["scales"] = name + ".scales";
    return ref;
  };
}

std::string WeightsWriter::file() const { return runtime::writeSafetensors(tensors_); }

DenseFromJson weightsReader(const runtime::SafetensorsFile& weights, std::shared_ptr<const void> storage) {
  return [&weights, storage](const nlohmann::json& j) -> ir::Attribute {
    if (j.is_object()) return mxWeight(j, weights, storage);
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
