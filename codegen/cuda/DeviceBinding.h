// One call's (or one capture's) device buffers and kernel arguments: the
// loaded module every call shares, and a Binding that lays out one device
// allocation (the arena, then each parameter, result and branch value,
// then eigh's info arrays) and prepares every step's launch arguments
// from the step plan and the call's sizes.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "codegen/StepPlan.h"
#include "codegen/cuda/CublasLtGemm.h"
#include "codegen/cuda/CudaCheck.h"
#include "codegen/cuda/CudaEigh.h"
#include "codegen/cuda/CudaEmitter.h"
#include "runtime/Tensor.h"

namespace graphc::codegen::cuda {

using runtime::Tensor;

/// What every binding shares: the loaded module, the library handles and
/// the constants' device copies.
struct Module {
  CudaModule source;
  cudaLibrary_t library = nullptr;
  std::unordered_map<std::string, cudaKernel_t> kernels;
  cusolverDnHandle_t solver = nullptr;
  cusolverDnParams_t solverParams = nullptr;
  syevjInfo_t syevj = nullptr;
  int solverVersion = 0;
  int multiprocessors = 1;
  std::vector<cudaKernel_t> functions;                   // by StepPlan::kernel
  std::vector<std::optional<LtEpilogue>> lt;             // by StepPlan::kernel: GEMMs cuBLASLt takes
  std::unordered_map<const SlotPlan*, void*> constants;  // device copies, made at compile time

  cudaKernel_t kernel(const std::string& name) const {
    auto it = kernels.find(name);
    if (it == kernels.end()) throw ir::Error(fmt::format("cuda: kernel {} is not in the module", name));
    return it->second;
  }

  ~Module() {
    for (auto& [slot, c] : constants) cudaFree(c);
    if (syevj) cusolverDnDestroySyevjInfo(syevj);
    if (solverParams) cusolverDnDestroyParams(solverParams);
    if (solver) cusolverDnDestroy(solver);
    if (library) cudaLibraryUnload(library);
  }
};

struct DeviceTensor {
  std::byte* data = nullptr;
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const { return runtime::checkedNumel(shape); }
  int64_t nbytes() const { return runtime::checkedBytes(dtype, shape); }
};

struct BoundRegion;

struct BoundStep {
  const StepPlan* plan = nullptr;
  std::vector<DeviceTensor> inputs, outputs;
  // kernel launches
  std::vector<void*> pointers;
  std::vector<int64_t> extents;
  std::vector<void*> args;
  dim3 grid, block;
  bool empty = false;
  std::unique_ptr<LtMatmul> lt;
  // eigh
  int64_t n = 0, batch = 0;
  EighPlan eigh;
  void* work = nullptr;
  size_t workBytes = 0;
  std::vector<std::byte> hostWork;
  int64_t infoOffset = -1;
  int* info = nullptr;      // device, one per matrix
  int* hostInfo = nullptr;  // pinned
  // cond
  unsigned char* hostPredicate = nullptr;  // pinned
  std::unique_ptr<BoundRegion> branches[2];
  // host
  Tensor hostValue;
};

struct BoundRegion {
  std::vector<DeviceTensor> tensors;  // per slot
  std::vector<BoundStep> steps;
};

/// One device allocation for a call: the arena, then each parameter,
/// result and branch value, then eigh's info arrays.
class Binding {
 public:
  Binding(Module& m, const ir::Graph& g, const RegionPlan& plan, const ir::SymbolBindings& sizes,
          const std::vector<Tensor>& inputs);

  ~Binding();

  std::unique_ptr<BoundRegion> region;
  std::vector<DeviceTensor> paramTensors, resultTensors;

 private:
  /// A tensor at offset `bytes` of the allocation (resolved later).
  DeviceTensor reserve(ir::DType t, std::vector<int64_t> shape, int64_t& bytes);

  /// First pass: every slot's offset, and each step's own reservations.
  std::unique_ptr<BoundRegion> layout(const RegionPlan& plan, const std::vector<DeviceTensor>& params,
                                      const std::vector<DeviceTensor>& results, int64_t& bytes);

  std::byte* resolve(std::byte* p);

  void* pinned(size_t bytes);

  /// Second pass: pointers, launch arguments, library state.
  void resolve(BoundRegion& r);

  int64_t extent(const std::vector<ir::Dim>& dims) const;

  void bindLaunch(BoundStep& s);

  void bindEigh(BoundStep& s);

  void bindHost(BoundStep& s);

  Module& m_;
  const ir::SymbolBindings& sizes_;
  std::byte* base_ = nullptr;
  std::unordered_set<std::byte*> constants_;
  std::vector<void*> pinned_, device_;
};

}  // namespace graphc::codegen::cuda
