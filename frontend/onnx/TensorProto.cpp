// ONNX TensorProto ↔ runtime::Tensor: initializers, Constant values and the
// test data's input_K.pb / output_K.pb files. Every size is checked against
// the data before anything is allocated, so a malformed or hostile file is
// an error, never a huge allocation or an out-of-bounds read.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "frontend/onnx/ImportContext.h"
#include "frontend/onnx/OnnxImporter.h"
#include "runtime/FileIO.h"

namespace graphc::frontend {

namespace onnximport {

namespace fs = std::filesystem;
using onnx::TensorProto;

std::optional<ir::DType> dtypeOf(int32_t onnxType) {
  switch (onnxType) {
    case TensorProto::FLOAT: return ir::DType::F32;
    case TensorProto::DOUBLE: return ir::DType::F64;
    case TensorProto::FLOAT16: return ir::DType::F16;
    case TensorProto::BFLOAT16: return ir::DType::BF16;
    case TensorProto::INT8: return ir::DType::I8;
    case TensorProto::INT32: return ir::DType::I32;
    case TensorProto::INT64: return ir::DType::I64;
    case TensorProto::BOOL: return ir::DType::Bool;
    default: return std::nullopt;
  }
}

std::string onnxTypeName(int32_t onnxType) {
  if (TensorProto::DataType_IsValid(onnxType) && onnxType != TensorProto::UNDEFINED) {
    std::string name = TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnxType));
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return name;
  }
  return fmt::format("type {}", onnxType);
}

namespace {

/// Copies `count` typed values (already counted) into t, converting each with `put`.
template <typename Field, typename Put>
void copyField(const Field& field, int64_t count, Put put) {
  for (int64_t i = 0; i < count; ++i) put(i, field.Get(static_cast<int>(i)));
}

}  // namespace

runtime::Tensor ExternalData::read(const TensorProto& t, ir::DType dtype, const std::vector<int64_t>& shape,
                                   const std::string& what) const {
  const int64_t bytes = runtime::checkedBytes(dtype, shape);
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto& entry : t.external_data()) {
    auto number = [&](const std::string& text) {
      int64_t v = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (error != std::errc() || end != text.data() + text.size() || v < 0)
        throw ir::Error(fmt::format("{}: external data {} \"{}\" is not a byte count", what, entry.key(), text));
      return v;
    };
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = number(entry.value());
    else if (entry.key() == "length")
      length = number(entry.value());
  }
  if (folder_.empty())
    throw ir::Error(fmt::format("{}: the data is in an external file, and the model was not read from a folder", what));
  if (location.empty()) throw ir::Error(fmt::format("{}: external data without a location", what));
  const fs::path relative(location);
  if (relative.is_absolute())
    throw ir::Error(
        fmt::format("{}: external data location \"{}\" is absolute; it must name a file in the model's "
                    "folder",
                    what, location));
  for (const fs::path& part : relative)
    if (part == "..")
      throw ir::Error(
          fmt::format("{}: external data location \"{}\" leaves the model's folder (it has '..')", what, location));
  if (length >= 0 && length != bytes)
    throw ir::Error(
        fmt::format("{}: external data length {} differs from the {} bytes its type needs", what, length, bytes));
  // The folder is opened once and the file beneath it without following a
  // symlink; size and bytes come from that one descriptor, so nothing
  // renamed or swapped in the folder meanwhile can redirect the read.
  try {
    if (!folderHandle_) folderHandle_.emplace(folder_);
  } catch (const ir::Error& e) {
    throw ir::Error(fmt::format("{}: external data \"{}\": {}", what, location, e.what()));
  }
  std::optional<runtime::OpenFile> file;
  try {
    file.emplace(folderHandle_->open(relative));
  } catch (const ir::Error& e) {
    throw ir::Error(fmt::format("{}: external data \"{}\" {}", what, location, e.what()));
  }
  if (offset > file->size() || bytes > file->size() - offset)
    throw ir::Error(fmt::format("{}: external data \"{}\" has {} bytes; the tensor needs [{}, {} + {})", what, location,
                                file->size(), offset, offset, bytes));
  runtime::Tensor out(dtype, shape);
  try {
    file->read(offset, bytes, out.data());
  } catch (const ir::Error& e) {
    throw ir::Error(fmt::format("{}: external data \"{}\": {}", what, location, e.what()));
  }
  return out;
}

runtime::Tensor tensorFromProto(const TensorProto& t, const std::string& what, const ExternalData* external) {
  if (t.has_segment())
    throw Unsupported("segmented tensor", fmt::format("{}: segmented tensors are not supported", what));
  std::optional<ir::DType> dtype = dtypeOf(t.data_type());
  if (!dtype)
    throw Unsupported("dtype " + onnxTypeName(t.data_type()),
                      fmt::format("{}: dtype {} is not supported (graphc has f16 bf16 f32 f64 i8 i32 i64 bool)", what,
                                  onnxTypeName(t.data_type())));
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw ir::Error(fmt::format("{}: negative dim {}", what, d));
  const int64_t count = runtime::checkedNumel(shape);
  const int64_t elementSize = ir::dtypeSize(*dtype);

  if (t.data_location() == TensorProto::EXTERNAL || t.external_data_size() > 0) {
    if (!external) throw ir::Error(fmt::format("{}: the data is in an external file, which is not read here", what));
    runtime::Tensor out = external->read(t, *dtype, shape, what);
    if (*dtype == ir::DType::Bool)
      for (int64_t i = 0; i < count; ++i) out.setInt(i, out.as<uint8_t>()[i] != 0);
    return out;
  }

  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (count > static_cast<int64_t>(raw.size()) / elementSize ||
        static_cast<int64_t>(raw.size()) != count * elementSize)
      throw ir::Error(fmt::format("{}: raw_data has {} bytes, {} elements of {} need {} bytes each", what, raw.size(),
                                  count, ir::dtypeName(*dtype), elementSize));
    runtime::Tensor out(*dtype, shape);
    std::memcpy(out.data(), raw.data(), raw.size());  // little-endian, as ONNX stores it
    if (*dtype == ir::DType::Bool)
      for (int64_t i = 0; i < count; ++i) out.setInt(i, out.as<uint8_t>()[i] != 0);
    return out;
  }

  // Typed fields: sized before the tensor is made.
  auto checkCount = [&](int size) {
    if (size != count) throw ir::Error(fmt::format("{}: holds {} values, its dims say {}", what, size, count));
  };
  switch (*dtype) {
    case ir::DType::F32: checkCount(t.float_data_size()); break;
    case ir::DType::F64: checkCount(t.double_data_size()); break;
    case ir::DType::I64: checkCount(t.int64_data_size()); break;
    default: checkCount(t.int32_data_size()); break;
  }
  runtime::Tensor out(*dtype, shape);
  switch (*dtype) {
    case ir::DType::F32: copyField(t.float_data(), count, [&](int64_t i, float v) { out.as<float>()[i] = v; }); break;
    case ir::DType::F64:
      copyField(t.double_data(), count, [&](int64_t i, double v) { out.as<double>()[i] = v; });
      break;
    case ir::DType::I64:
      copyField(t.int64_data(), count, [&](int64_t i, int64_t v) { out.as<int64_t>()[i] = v; });
      break;
    case ir::DType::F16:
    case ir::DType::BF16:
      // 16-bit floats are stored as their bit patterns in int32_data.
      copyField(t.int32_data(), count, [&](int64_t i, int32_t v) { out.as<uint16_t>()[i] = static_cast<uint16_t>(v); });
      break;
    default: copyField(t.int32_data(), count, [&](int64_t i, int32_t v) { out.setInt(i, v); }); break;
  }
  return out;
}

}  // namespace onnximport

runtime::Tensor parseTensorProto(std::string_view bytes, const std::string& name) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw ir::Error(fmt::format("{}: not a valid ONNX TensorProto", name));
  return onnximport::tensorFromProto(proto, name);
}

runtime::Tensor readTensorProtoFile(const std::string& path) { return parseTensorProto(runtime::readFile(path), path); }

std::string tensorProtoName(std::string_view bytes) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return "";
  return proto.name();
}

std::map<std::string, runtime::Tensor> readTestDataInputs(const std::filesystem::path& dataSet,
                                                          const std::vector<std::string>& graphInputs) {
  std::map<std::string, runtime::Tensor> inputs;
  for (size_t k = 0;; ++k) {
    const std::filesystem::path file = dataSet / ("input_" + std::to_string(k) + ".pb");
    if (!std::filesystem::exists(file)) return inputs;
    const std::string bytes = runtime::readFile(file);
    std::string name = tensorProtoName(bytes);
    if (name.empty() && k < graphInputs.size()) name = graphInputs[k];
    inputs[name] = parseTensorProto(bytes, file.string());
  }
}

}  // namespace graphc::frontend
