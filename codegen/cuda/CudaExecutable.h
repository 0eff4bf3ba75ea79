// The cuda backend's Executable: a graph that went through the default
// pipeline becomes one CUDA module (every kernel, cond branches included,
// in one NVRTC program), loaded with cudaLibraryLoadData, and a plan of
// steps over one device allocation per call (the memory plan's arena, then
// the parameters, results and branch values):
//
//   kernel     a generated kernel launch (pointwise, row reduction, or GEMM
//              with its fused epilogue)
//   cublaslt   GEMM + bias [+ relu/gelu] through cuBLASLt's epilogues, with
//              --matmul=cublaslt (the measured comparison; kernels whose
//              epilogue cuBLASLt cannot express keep the generated GEMM)
//   eigh       cuSOLVER (see CudaEigh.h)
//   cond       a plain run copies the predicate to the host and synchronises
//              the stream to choose (the one documented sync); under
//              capture the whole Executable is one CUDA graph and each cond
//              a conditional IF node with an else body, its value set on
//              the device by a one-thread kernel, so replay never waits on
//              the host
//   copy       a result that is a parameter, a constant or returned twice
//   host       an op no kernel holds (a `full` of symbolic shape): computed
//              on the host when the call's sizes are bound, uploaded once
//
// run() copies the inputs to the device, runs, and copies the results back.
// capture() binds the caller's tensors and records one CUDA graph (input
// copies from pinned staging, every step, result copies back); replay()
// copies the tensors' current contents in, launches the graph, and copies
// the results out: no per-call shape work, no launches but one.
#pragma once

#include <memory>
#include <string>

#include "codegen/Backend.h"
#include "codegen/cuda/CudaEmitter.h"
#include "ir/Graph.h"
#include "runtime/Executable.h"

namespace graphc::codegen::cuda {

/// The CUDA C++ module of `g`'s kernels, in program order (needs no device).
CudaModule emitGraph(const ir::Graph& g);

/// Compiles `g` for device 0. Throws ir::Error("no CUDA device: ...")
/// without a usable device, ir::LocatedError (at the node) for a kernel
/// the backend cannot lower, ir::Error with NVRTC's log if it cannot
/// compile. The Executable refers to `g`, which must outlive it.
/// `report`, if given, gets NVRTC's stage (where the cubin came from).
std::unique_ptr<runtime::Executable> compileGraph(const ir::Graph& g, const CompileOptions& options = {},
                                                  CompileReport* report = nullptr);

/// Runs what capture() bound one launch at a time, without the CUDA graph
/// (what replay is measured against); `e` must come from compileGraph.
void replayStepByStep(runtime::Executable& e);

/// For benchmarks: the mean device time of the captured steps alone (no
/// host copies), over `iterations` back-to-back launches of the graph of
/// steps (asGraph) or of the steps one by one, timed with CUDA events.
double timeCapturedSteps(runtime::Executable& e, int iterations, bool asGraph);

}  // namespace graphc::codegen::cuda
