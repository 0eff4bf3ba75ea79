#include "ir/DType.h"

#include <array>

namespace graphc::ir {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  int64_t size;
};
constexpr std::array<DTypeInfo, 8> kDTypes = {{
    {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2},
    {DType::F32, "f32", 4},
    {DType::F64, "f64", 8},
    {DType::I8, "i8", 1},
    {DType::I32, "i32", 4},
    {DType::I64, "i64", 8},
    {DType::Bool, "bool", 1},
}};
}  // namespace

std::string_view dtypeName(DType t) { return kDTypes[static_cast<size_t>(t)].name; }

int64_t dtypeSize(DType t) { return kDTypes[static_cast<size_t>(t)].size; }

std::optional<DType> parseDType(std::string_view s) {
  for (const DTypeInfo& info : kDTypes)
    if (info.name == s) return info.type;
  return std::nullopt;
}

}  // namespace graphc::ir
