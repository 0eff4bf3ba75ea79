// The CPU backend's Executable: compiles a graph that went through the
// default pipeline (fused kernels, memory plan) into a plan of steps —
// JIT-compiled kernels, GEMMs and convolutions on the packed GEMM
// (runtime/cpu/Gemm.h, constant weights packed here, once) with their
// JIT-compiled epilogues,
// eigh, cond steps holding their branches' plans, and the few ops no kernel
// holds — over buffers in one arena, and runs it on the thread pool.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/Backend.h"
#include "codegen/StepPlan.h"
#include "codegen/cpu/CompiledKernel.h"
#include "codegen/kernel/Lowering.h"
#include "ir/Graph.h"
#include "runtime/Executable.h"

namespace graphc::codegen::cpu {

/// How the cpu backend lowers fused ops: convolutions as GEMMs, small
/// windows unrolled, short inner dims merged.
inline kernel::LowerOptions cpuLowerOptions() {
  return {.convolutionsAsGemm = true, .unrollSmallWindows = true, .mergeShortInnerDims = true};
}

/// Which input of a GEMM step may be a weight held in an MX format (ir/Mx.h,
/// blocked along the reduction dim): a linear's weight [n, k], a matmul's
/// B [k, n] (stored transposed) or a convolution's filters [m, k, ...]; -1
/// for any other step.
int mxWeightOperand(const codegen::StepPlan& s);

/// Whether kernel `k` reads input `input` only by gathering rows of it (an
/// embedding table): a matrix whose every load's first index is an
/// indirect one (index_select, gather) — the reads worth decoding from MX,
/// a few rows of a large table.
bool gathersRows(const codegen::kernel::Kernel& k, int input);

/// How a constant slot of a plan is read by the steps of its region: an MX
/// weight may live there when every reader is a GEMM reading it as its
/// weight (mxWeightOperand) or a non-GEMM kernel gathering its rows
/// (gathersRows), all one way — as a matmul's B [k, n], which must be a
/// matrix and is stored transposed, or not. `gathered`: some reader is a
/// gather (its kernel, not the GEMM, decodes it).
struct ConstantUse {
  bool read = false;
  bool onlyMxReaders = true;
  bool transposed = false;
  bool gathered = false;
  bool mxAllowed() const { return read && onlyMxReaders; }
};
/// Every constant slot of `plan` and of its cond branches' plans.
std::unordered_map<const codegen::SlotPlan*, ConstantUse> constantUses(const codegen::RegionPlan& plan);

/// The Executable over kernels compiled already, one per fused op of `g`
/// in `lowered` order (the JIT's, or an exported package's shared object).
/// It refers to `g`, which must outlive it.
std::unique_ptr<runtime::Executable> makeExecutable(const ir::Graph& g, const codegen::LoweredKernels& lowered,
                                                    std::vector<std::shared_ptr<const CompiledKernel>> kernels);

/// Compiles every kernel of `g` with the JIT (CompileGraph.cpp), then
/// makeExecutable. Throws ir::LocatedError (at the node) for a kernel the backend cannot
/// compile. The Executable refers to `g`, which must outlive it. `report`,
/// if given, receives each kernel's compile time as a detail stage.
std::unique_ptr<runtime::Executable> compileGraph(const ir::Graph& g, CompileReport* report = nullptr);

}  // namespace graphc::codegen::cpu
