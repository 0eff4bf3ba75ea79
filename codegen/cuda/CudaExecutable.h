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
#include <string_view>

#include "codegen/Backend.h"
#include "codegen/StepPlan.h"
#include "codegen/cuda/CudaEmitter.h"
#include "ir/Graph.h"
#include "runtime/Executable.h"

namespace graphc::codegen::cuda {

/// The CUDA C++ module of `g`'s kernels, in program order (needs no device).
CudaModule emitGraph(const ir::Graph& g);
/// The same of kernels already lowered (codegen::lowerKernels(g)).
CudaModule emitLowered(const ir::Graph& g, const codegen::LoweredKernels& lowered);

/// What an exported package's cuda/ folder holds (docs/export.md): the
/// module's source, a cubin per architecture, and PTX.
inline constexpr const char* kExportedSource = "cuda/module.cu";
inline constexpr const char* kExportedPtx = "cuda/module.ptx";
inline std::string exportedCubin(const std::string& arch) { return "cuda/" + arch + ".cubin"; }
/// The architectures a package gets cubins for without --arch: a cubin
/// runs on its major version's later minors (sm_80 on sm_86 and sm_89);
/// anything else compiles the PTX (of the first).
inline constexpr const char* kExportArchs[] = {"sm_80", "sm_90", "sm_100", "sm_120"};

/// An Executable over `source` compiled ahead: `image` is a cubin for
/// device 0's architecture or the module's PTX (which the driver compiles).
/// No NVRTC here: the compiler-free runtime (deploy/cuda/) makes an
/// exported package's Executable with it. Throws ir::Error("no CUDA
/// device: ...") without a device, ir::Error when the driver refuses the
/// image. The Executable refers to `g`, which must outlive it.
std::unique_ptr<runtime::Executable> makeExecutable(const ir::Graph& g, const codegen::LoweredKernels& lowered,
                                                    CudaModule source, std::string_view image, MatmulImpl matmul);

/// Compiles `g` for device 0 (CompileGraph.cpp: NVRTC, then makeExecutable). Throws ir::Error("no CUDA device: ...")
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
