// Weights held in an MX format (or f16/bf16, ir/Mx.h) as kernel operands:
// what an exported package's --weights makes of a graph's constants, as
// both backends' kernels read them. lowerKernels marks each input buffer
// that holds one (kernel::Buffer::mx), so the kernel IR — its text, its
// checksum in a package's kernel table, the JIT's cache key — says so. A
// kernel reads such a weight as raw bytes — its packed rows, then (16-byte
// aligned) its block scales, one buffer — and dequantises each element
// where it loads it: the cuda GEMM in its shared-memory tile load, a cpu
// kernel (an embedding table's gather) in the load itself. (The cpu GEMM's
// weights are the runtime's to pack, runtime/cpu/Gemm.h; its epilogue
// kernels never read them.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/kernel/KernelIR.h"
#include "ir/Graph.h"
#include "ir/Mx.h"

namespace graphc::codegen {

using kernel::MxLayout;

/// Where the scales start in such a buffer, and its size (at least one
/// padding byte past the rows, so a decoder may read the byte after an
/// element's).
int64_t mxScalesOffset(const MxLayout& m);
int64_t mxBufferBytes(const MxLayout& m);

/// The buffer a kernel reads for `w`.
std::vector<std::byte> mxBuffer(const ir::MxWeights& w);

/// The layout of operand `i` of fused op `f` if a constant holding an MX
/// weight defines it.
std::optional<MxLayout> mxLayoutOf(const ir::Node& f, size_t i);

}  // namespace graphc::codegen
