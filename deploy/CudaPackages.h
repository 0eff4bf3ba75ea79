// How the compiler-free runtime runs a cuda package (docs/export.md): its
// cuda/ entries go to libgraphc-runtime-cuda.so, a module loaded the first
// time a cuda package is (runtime::moduleFolders: lib/graphc/ beside
// libgraphc-runtime.so), so that a program running cpu packages never maps
// the CUDA libraries. The module links the cuda Executable and the CUDA
// runtime, cuSOLVER and cuBLASLt — no NVRTC: the package's cubins or its
// PTX (which the driver compiles) are what runs.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "codegen/StepPlan.h"
#include "ir/Graph.h"
#include "runtime/Executable.h"

namespace graphc::deploy {

/// A cuda package's code, as the loader hands it to the module.
struct CudaPackageCode {
  std::string name;                                         // the package, for errors
  std::map<std::string, std::span<const std::byte>> files;  // its cuda/ entries
  std::map<std::string, std::string> target;                // the manifest's "target"
};

/// Checks that the package's module is the one this runtime emits for
/// `lowered`, picks the cubin for device 0 (or the PTX) and loads it.
/// Throws ir::Error naming the package and what is wrong, or
/// "no CUDA device: ..." without one.
using CudaPackageLoader = std::unique_ptr<runtime::Executable> (*)(const ir::Graph& g,
                                                                   const codegen::LoweredKernels& lowered,
                                                                   const CudaPackageCode& code);

/// What the module's entry point returns: the ABI it was built for
/// (codegen::kBackendPluginAbi, compared) and its loader.
struct CudaRuntimePlugin {
  const char* abi = nullptr;
  CudaPackageLoader load = nullptr;
};
inline constexpr const char* kCudaRuntimeModule = "libgraphc-runtime-cuda.so";
inline constexpr const char* kCudaRuntimeEntry = "graphc_runtime_cuda_plugin";

/// The module's loader, found and opened once per process; throws
/// ir::Error naming where it looked, or why it did not load.
CudaPackageLoader cudaPackageLoader();

}  // namespace graphc::deploy
