// Element types of graphc tensors: the eight dtypes of the .graph language.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace graphc::ir {

enum class DType : uint8_t { F16, BF16, F32, F64, I8, I32, I64, Bool };

/// The spelling used in .graph text ("f32", "bool", ...).
std::string_view dtypeName(DType t);
/// Parses a dtype spelling; nullopt when `s` names no dtype.
std::optional<DType> parseDType(std::string_view s);
/// Size of one element in bytes.
int64_t dtypeSize(DType t);

inline bool isFloat(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64; }
inline bool isInteger(DType t) { return t == DType::I8 || t == DType::I32 || t == DType::I64; }

}  // namespace graphc::ir
