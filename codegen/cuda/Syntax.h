// CUDA C++ spelling shared by the kernel writers: the C++ types values of
// each dtype are computed and stored in, conversions between them, and
// literals (exact for integers, round-tripping for floats).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Type.h"

namespace graphc::codegen::cuda {

using ir::DType;

/// Rows up to this many elements (static) get a warp each; longer or
/// symbolic rows a block each.
inline constexpr int64_t kWarpRowMax = 512;

int64_t staticExtent(const std::vector<ir::Dim>& dims);

/// The C++ type a value of `t` is computed in.
std::string computeType(DType t);

/// The C++ type a buffer of `t` stores.
std::string storageType(DType t);

/// Wraps a computed float of `t` so it holds what `t` holds.
std::string rounded(DType t, const std::string& v);

std::string fromStorage(DType t, const std::string& raw);

std::string toStorage(DType t, const std::string& v);

std::string floatLiteral(DType t, double v);

/// An int64 literal; INT64_MIN has no decimal spelling of type long long.
std::string i64Literal(int64_t v);

/// An integer or bool literal of dtype `t`, exact.
std::string intLiteral(DType t, int64_t v);

/// A small literal (0 for neg/abs/relu) of any dtype.
std::string literal(DType t, double v);

}  // namespace graphc::codegen::cuda
