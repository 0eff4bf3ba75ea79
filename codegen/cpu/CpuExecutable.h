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

/// Which input of a GEMM kernel may be a weight held in an MX format (ir/Mx.h,
/// blocked along the reduction dim): a linear's weight [n, k], a matmul's
/// B [k, n] (stored transposed) or a convolution's filters [m, k, ...] of
/// groups 1; -1 for any other kernel.
int mxWeightInput(const codegen::kernel::Kernel& k);

/// Whether kernel `k` reads input `input` only by gathering rows of it (an
/// embedding table): a matrix whose every load's first index is an
/// indirect one (index_select, gather) — the reads worth decoding from MX,
/// a few rows of a large table.
bool gathersRows(const codegen::kernel::Kernel& k, int input);

/// The cpu backend's MX readers (codegen::MxReader): a GEMM's weight
/// (mxWeightInput; a matmul's B a matrix), which the runtime's GEMM packs
/// from the MX bytes, or a table a kernel gathers rows of, which the
/// kernel decodes as it loads.
bool readsMxInput(const codegen::kernel::Kernel& k, int input);

/// The Executable over kernels compiled already, one per fused op of `g`
/// in `lowered` order (the JIT's, or an exported package's shared object).
/// It refers to `g`, which must outlive it.
std::unique_ptr<runtime::Executable> makeExecutable(const ir::Graph& g, const codegen::LoweredKernels& lowered,
                                                    std::vector<std::shared_ptr<const CompiledKernel>> kernels);

/// The same over `g`'s plan (planGraph), with a kernel for each one the
/// plan runs (null for the others).
std::unique_ptr<runtime::Executable> makeExecutable(const ir::Graph& g, std::unique_ptr<RegionPlan> plan,
                                                    std::vector<std::shared_ptr<const CompiledKernel>> kernels);

/// Compiles the kernels of `g` the plan runs with the JIT (CompileGraph.cpp), then
/// makeExecutable. Throws ir::LocatedError (at the node) for a kernel the backend cannot
/// compile. The Executable refers to `g`, which must outlive it. `report`,
/// if given, receives each kernel's compile time as a detail stage; a set
/// `cancel` stops the compile before the next kernel (runtime::Cancelled).
std::unique_ptr<runtime::Executable> compileGraph(const ir::Graph& g, CompileReport* report = nullptr,
                                                  const std::atomic<bool>* cancel = nullptr);

}  // namespace graphc::codegen::cpu
