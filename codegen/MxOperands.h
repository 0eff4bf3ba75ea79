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
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "codegen/StepPlan.h"
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

/// Whether a backend's kernel `k` can read its input `input` held in an MX
/// format (Backend::readsMxInput: the cpu GEMM's weights and gathers, the
/// cuda f32 GEMM's B).
using MxReader = std::function<bool(const kernel::Kernel& k, int input)>;

/// How a constant slot of a plan is read by the steps of its region: an MX
/// weight may live there when every reader is a kernel that `reads` it so,
/// all one way — as a matmul's B [k, n], stored transposed, or not.
/// `gathered`: some reader is not a GEMM (its kernel, not the GEMM's
/// packing, decodes it).
struct ConstantUse {
  bool read = false;
  bool onlyMxReaders = true;
  bool transposed = false;
  bool gathered = false;
  bool mxAllowed() const { return read && onlyMxReaders; }
};
/// Every constant slot of `plan` and of its cond branches' plans.
std::unordered_map<const SlotPlan*, ConstantUse> constantUses(const RegionPlan& plan, const MxReader& reads);

/// Throws ir::Error unless every MX weight of `plan` (cond branches
/// included) is read only where constantUses allows one, stored as its
/// readers read it, of its slot's shape: what a package's Executable
/// checks before any kernel touches the bytes.
void checkMxUses(const RegionPlan& plan, const MxReader& reads);

}  // namespace graphc::codegen
