// Checked arithmetic on sizes: element counts, byte counts, offsets. Every
// product or sum of sizes in graphc (types, tensors, the memory plan, the
// executables, the .npy and ONNX readers) goes through these, so no size
// computation can wrap: a result that does not fit int64 is an error, not
// a small number that a kernel then writes past.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ir/DType.h"
#include "ir/Type.h"

namespace graphc::ir {

/// a * b and a + b; nullopt when the result does not fit int64.
std::optional<int64_t> mulSizes(int64_t a, int64_t b);
std::optional<int64_t> addSizes(int64_t a, int64_t b);

/// The product of non-negative sizes; nullopt when one is negative or the
/// product overflows.
std::optional<int64_t> productOf(std::span<const int64_t> sizes);
/// productOf(shape) * dtypeSize(t): a tensor's byte count.
std::optional<int64_t> bytesOf(DType t, std::span<const int64_t> shape);

/// Throwing forms, for run time: ir::Error("<what> overflows int64: ...").
int64_t checkedMul(int64_t a, int64_t b, std::string_view what);
int64_t checkedAdd(int64_t a, int64_t b, std::string_view what);

/// A dim's value under `sizes`, and the product of dims' values (a
/// kernel's iteration space): ir::Error naming `what` when a symbol is
/// unbound or the value overflows.
int64_t checkedValue(const Dim& d, const SymbolBindings& sizes, std::string_view what);
int64_t checkedExtent(const std::vector<Dim>& dims, const SymbolBindings& sizes, std::string_view what);

/// `n` rounded up to a multiple of `align` (> 0); nullopt on overflow.
std::optional<int64_t> alignUp(int64_t n, int64_t align);

}  // namespace graphc::ir
