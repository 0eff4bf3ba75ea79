// The step plan every backend's Executable runs: what compile() decides
// about a graph that went through the default pipeline, independent of any
// call and of the device. Each value gets a slot (where its buffer lives);
// each node a step (a kernel, a GEMM with its epilogue kernel, an attention
// kernel (its scores' epilogue; the backend's softmax and GEMMs), eigh, a cond
// holding its branches' plans, a host op); a result that is not computed
// into its output (a parameter, a constant, a value returned twice) gets a
// copy step; a concatenation whose operands were written into its buffer
// (ConcatViews.h) gets none. A result that updates an input in place has no
// Output slot: its value's slot is the input's Param slot, or a copy step
// writes the Param slot at the end (BufferAssignment::updates), so the
// Executables write into a Param slot only there. Backends attach their compiled kernels by
// StepPlan::kernel, the kernel's position in codegen::kernel::fusedOps order.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "codegen/BufferAssignment.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "ir/Graph.h"
#include "runtime/Tensor.h"

namespace graphc::codegen {

/// Where a value's buffer lives.
struct SlotPlan {
  enum class Where { Param, Output, Arena, Owned, Constant };
  Where where = Where::Owned;
  ir::TensorType type;
  int index = 0;             // Param, Output: position
  ArenaOffset offset;        // Arena
  runtime::Tensor constant;  // Constant: computed at compile time
  /// Constant: a weight held in an MX format instead (`constant` empty),
  /// which only a GEMM step may read, as its weight operand.
  std::shared_ptr<const ir::MxWeights> mx;
  const ir::Node* constantNode = nullptr;  // Constant: the node it holds
};

struct RegionPlan;

struct StepPlan {
  enum class Kind { Kernel, Gemm, Eigh, Cond, Host, Copy, Attention };
  Kind kind = Kind::Host;
  const ir::Node* node = nullptr;
  int kernel = -1;  // Kernel, Gemm, Attention: position in fusedOps order
  std::shared_ptr<const codegen::kernel::Kernel> kernelIR;
  std::vector<int> inputs, outputs;  // slots
  std::unique_ptr<RegionPlan> branches[2];
  char uplo = 'L';  // Eigh
};

struct RegionPlan {
  std::vector<SlotPlan> slots;
  std::vector<StepPlan> steps;
  ArenaOffset arenaSize;  // the graph body's: what one call allocates for its Arena slots
};

/// The plan of a graph: its body with the buffer assignment (cond
/// branches without, their values Owned). `kernels` are the lowered fused
/// ops of the whole graph, in fusedOps order.
std::unique_ptr<RegionPlan> planGraph(const ir::Graph& g,
                                      const std::vector<std::shared_ptr<const kernel::Kernel>>& kernels,
                                      const std::unordered_map<const ir::Node*, int>& kernelOf);

/// Which of `kernelCount` kernels (by StepPlan::kernel) the plan's steps
/// run, in cond branches too: a concatenation in place runs none.
std::vector<bool> kernelsRun(const RegionPlan& plan, size_t kernelCount);

/// Each fused op of `g` lowered to the kernel IR, in fusedOps order, and
/// its position; a body the lowering refuses is an ir::LocatedError at the op.
struct LoweredKernels {
  std::vector<const ir::Node*> fused;
  std::vector<std::shared_ptr<const codegen::kernel::Kernel>> kernels;
  std::unordered_map<const ir::Node*, int> position;
};
LoweredKernels lowerKernels(const ir::Graph& g, const kernel::LowerOptions& options = {});

/// Throws the reference interpreter's error for a kernel step that cannot
/// run at these sizes: one that would store an amax or amin of an empty row
/// (a reduction over a dim of size 0 for a non-empty output; an attention
/// kernel with no keys: there is no identity to store), or one whose slice
/// from a negative start needs a symbolic dim longer than it is.
void checkKernelSizes(const StepPlan& step, const ir::SymbolBindings& sizes);

}  // namespace graphc::codegen
