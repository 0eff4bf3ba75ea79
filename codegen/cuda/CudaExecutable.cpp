#include "codegen/cuda/CudaExecutable.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <unordered_map>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include "codegen/cuda/CublasLtGemm.h"
#include "codegen/cuda/CudaCheck.h"
#include "codegen/cuda/CudaEigh.h"
#include "codegen/cuda/CudaRuntime.h"
#include "codegen/cuda/Nvrtc.h"
#include "ir/KernelIR.h"
#include "ir/Printer.h"
#include "ir/SizeMath.h"
#include "runtime/Interpreter.h"
#include "runtime/ReferenceOps.h"
#include "runtime/StepPlan.h"

namespace graphc::codegen::cuda {

namespace {

using runtime::Tensor;

void checkSolver(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw ir::Error(fmt::format("cusolver: {}: status {}", what, static_cast<int>(s)));
}

/// n + extra rounded up to a multiple of `a`: the device arena's layout;
/// throws ir::Error when it overflows int64.
int64_t grow(int64_t n, int64_t extra, int64_t a) {
  std::optional<int64_t> sum = ir::addSizes(n, extra);
  std::optional<int64_t> aligned = sum ? ir::alignUp(*sum, a) : std::nullopt;
  if (!aligned) throw ir::Error("the device arena's size overflows int64");
  return *aligned;
}

using runtime::RegionPlan;
using runtime::SlotPlan;
using runtime::StepPlan;

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
  std::vector<cudaKernel_t> functions;           // by StepPlan::kernel
  std::vector<std::optional<LtEpilogue>> lt;     // by StepPlan::kernel: GEMMs cuBLASLt takes
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

// ---- binding: one call's (or one capture's) device buffers and arguments ---

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
  int* info = nullptr;        // device, one per matrix
  int* hostInfo = nullptr;    // pinned
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
          const std::vector<Tensor>& inputs)
      : m_(m), sizes_(sizes) {
    int64_t bytes = grow(g.memoryPlan ? g.memoryPlan->peak.evaluate(sizes) : 0, 0, 256);
    std::vector<DeviceTensor> params, results;
    for (const Tensor& t : inputs) params.push_back(reserve(t.dtype(), t.shape(), bytes));
    for (const ir::TensorType& t : g.resultTypes)
      results.push_back(reserve(t.dtype, runtime::concreteShape(ir::substitute(t, sizes)), bytes));
    region = layout(plan, params, results, bytes);
    check(cudaMalloc(reinterpret_cast<void**>(&base_), static_cast<size_t>(std::max<int64_t>(bytes, 256))), "cudaMalloc (arena)");
    for (auto& p : params) p.data = base_ + reinterpret_cast<intptr_t>(p.data);
    for (auto& r : results) r.data = base_ + reinterpret_cast<intptr_t>(r.data);
    paramTensors = params;
    resultTensors = results;
    resolve(*region);
  }

  ~Binding() {
    for (void* p : pinned_) cudaFreeHost(p);
    for (void* p : device_) cudaFree(p);
    if (base_) cudaFree(base_);
  }

  std::unique_ptr<BoundRegion> region;
  std::vector<DeviceTensor> paramTensors, resultTensors;

 private:
  /// A tensor at offset `bytes` of the allocation (resolved later).
  DeviceTensor reserve(ir::DType t, std::vector<int64_t> shape, int64_t& bytes) {
    DeviceTensor d;
    d.dtype = t;
    d.shape = std::move(shape);
    d.data = reinterpret_cast<std::byte*>(static_cast<intptr_t>(bytes));
    bytes = grow(bytes, d.nbytes(), 256);
    return d;
  }

  /// First pass: every slot's offset, and each step's own reservations.
  std::unique_ptr<BoundRegion> layout(const RegionPlan& plan, const std::vector<DeviceTensor>& params,
                                      const std::vector<DeviceTensor>& results, int64_t& bytes) {
    auto out = std::make_unique<BoundRegion>();
    for (const SlotPlan& s : plan.slots) {
      const std::vector<int64_t> shape = runtime::concreteShape(ir::substitute(s.type, sizes_));
      DeviceTensor d;
      switch (s.where) {
        case SlotPlan::Where::Param: d = params[static_cast<size_t>(s.index)]; break;
        case SlotPlan::Where::Output: d = results[static_cast<size_t>(s.index)]; break;
        case SlotPlan::Where::Constant:
          d.dtype = s.type.dtype;
          d.shape = shape;
          d.data = static_cast<std::byte*>(m_.constants.at(&s));
          constants_.insert(d.data);
          break;
        case SlotPlan::Where::Arena:
          d.dtype = s.type.dtype;
          d.shape = shape;
          d.data = reinterpret_cast<std::byte*>(static_cast<intptr_t>(s.offset.evaluate(sizes_)));
          break;
        case SlotPlan::Where::Owned: d = reserve(s.type.dtype, shape, bytes); break;
      }
      out->tensors.push_back(d);
    }
    for (const StepPlan& s : plan.steps) {
      runtime::checkReductionRows(s, sizes_);
      BoundStep b;
      b.plan = &s;
      for (int i : s.inputs) b.inputs.push_back(out->tensors[static_cast<size_t>(i)]);
      for (int o : s.outputs) b.outputs.push_back(out->tensors[static_cast<size_t>(o)]);
      if (s.kind == StepPlan::Kind::Cond) {
        std::vector<DeviceTensor> operands(b.inputs.begin() + 1, b.inputs.end());
        for (int k = 0; k < 2; ++k) b.branches[k] = layout(*s.branches[k], operands, b.outputs, bytes);
      }
      if (s.kind == StepPlan::Kind::Eigh) {
        const DeviceTensor& a = b.inputs[0];
        b.n = a.shape.back();
        b.batch = a.numel() / std::max<int64_t>(b.n * b.n, 1);
        b.infoOffset = bytes;
        bytes = grow(bytes, ir::checkedMul(4, std::max<int64_t>(b.batch, 1), "eigh info array"), 256);
      }
      out->steps.push_back(std::move(b));
    }
    return out;
  }

  std::byte* resolve(std::byte* p) {
    if (constants_.count(p)) return p;
    return base_ + reinterpret_cast<intptr_t>(p);
  }

  void* pinned(size_t bytes) {
    void* p = nullptr;
    check(cudaMallocHost(&p, std::max<size_t>(bytes, 1)), "cudaMallocHost");
    std::memset(p, 0, std::max<size_t>(bytes, 1));
    pinned_.push_back(p);
    return p;
  }

  /// Second pass: pointers, launch arguments, library state.
  void resolve(BoundRegion& r) {
    for (DeviceTensor& t : r.tensors) t.data = resolve(t.data);
    for (BoundStep& s : r.steps) {
      for (DeviceTensor& t : s.inputs) t.data = resolve(t.data);
      for (DeviceTensor& t : s.outputs) t.data = resolve(t.data);
      for (auto& b : s.branches)
        if (b) resolve(*b);
      switch (s.plan->kind) {
        case StepPlan::Kind::Kernel:
        case StepPlan::Kind::Gemm: bindLaunch(s); break;
        case StepPlan::Kind::Eigh: bindEigh(s); break;
        case StepPlan::Kind::Cond: s.hostPredicate = static_cast<unsigned char*>(pinned(1)); break;
        case StepPlan::Kind::Host: bindHost(s); break;
        case StepPlan::Kind::Copy: break;
      }
    }
  }

  int64_t extent(const std::vector<ir::Dim>& dims) const {
    int64_t n = 1;
    for (const ir::Dim& d : dims) n = ir::checkedMul(n, d.isStatic() ? d.size : sizes_.at(d.symbol), "a kernel's iteration space");
    return n;
  }

  void bindLaunch(BoundStep& s) {
    const ir::kernel::Kernel& k = *s.plan->kernelIR;
    const CudaKernel& info = m_.source.kernels.at(static_cast<size_t>(s.plan->kernel));
    for (DeviceTensor& t : s.inputs) s.pointers.push_back(t.data);
    for (DeviceTensor& t : s.outputs) s.pointers.push_back(t.data);
    for (const std::string& sym : info.symbols) s.extents.push_back(sizes_.at(sym));
    const int64_t total = extent(k.outer);
    s.block = dim3(static_cast<unsigned>(info.blockThreads));
    switch (info.strategy) {
      case Strategy::Pointwise: {
        s.extents.push_back(total);
        const int64_t work = (total + info.vectorWidth - 1) / info.vectorWidth;
        s.grid = dim3(static_cast<unsigned>(std::clamp<int64_t>((work + 255) / 256, 1, int64_t{m_.multiprocessors} * 16)));
        s.empty = total == 0;
        break;
      }
      case Strategy::WarpPerRow:
      case Strategy::BlockPerRow: {
        s.extents.push_back(total);
        s.extents.push_back(extent(k.reduceSizes));
        const int64_t perBlock = info.strategy == Strategy::WarpPerRow ? info.rowsPerBlock : 1;
        s.grid = dim3(static_cast<unsigned>(std::clamp<int64_t>((total + perBlock - 1) / perBlock, 1, 1 << 20)));
        s.empty = total == 0;
        break;
      }
      case Strategy::GemmSimt:
      case Strategy::GemmTensorCore: {
        const ir::kernel::Gemm& g = *k.gemm;
        const DeviceTensor& a = s.inputs[static_cast<size_t>(g.a)];
        const DeviceTensor& b = s.inputs[static_cast<size_t>(g.b)];
        const int64_t K = a.shape.back();
        int64_t M = 1, N = 1, batch = 1;
        if (g.transposeB) {
          N = b.shape[0];
          M = N == 0 ? 0 : total / N;
        } else {
          const size_t ra = a.shape.size(), rb = b.shape.size();
          if (ra > 1) M = a.shape[ra - 2];
          if (rb > 1) N = b.shape.back();
          batch = M * N == 0 ? 0 : total / (M * N);
        }
        s.extents.insert(s.extents.end(), {batch, M, N, K});
        const auto tiles = [](int64_t n, int t) { return (n + t - 1) / t; };
        s.grid = dim3(static_cast<unsigned>(std::clamp<int64_t>(tiles(N, info.tileN), 1, INT32_MAX)),
                      static_cast<unsigned>(std::clamp<int64_t>(tiles(M, info.tileM), 1, 65535)),
                      static_cast<unsigned>(std::clamp<int64_t>(batch, 1, 65535)));
        s.empty = total == 0;
        if (const auto& lt = m_.lt[static_cast<size_t>(s.plan->kernel)]; lt && !s.empty)
          s.lt = std::make_unique<LtMatmul>(a.dtype, M, N, K, *lt);
        break;
      }
    }
    for (void*& p : s.pointers) s.args.push_back(&p);
    for (int64_t& e : s.extents) s.args.push_back(&e);
  }

  void bindEigh(BoundStep& s) {
    s.info = reinterpret_cast<int*>(base_ + s.infoOffset);
    s.hostInfo = static_cast<int*>(pinned(4 * static_cast<size_t>(std::max<int64_t>(s.batch, 1))));
    if (s.batch == 0 || s.n == 0) return;
    const DeviceTensor& a = s.inputs[0];
    if (a.dtype != ir::DType::F32 && a.dtype != ir::DType::F64) throw ir::Error("cuda: eigh takes f32 or f64");
    s.eigh = planEigh(s.n, s.batch, m_.solverVersion);
    const bool f64 = a.dtype == ir::DType::F64;
    const cudaDataType_t t = f64 ? CUDA_R_64F : CUDA_R_32F;
    const cublasFillMode_t fill = s.plan->uplo == 'L' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    void* v = s.outputs[1].data;
    void* w = s.outputs[0].data;
    size_t device = 0, host = 0;
    const int64_t first = s.eigh.calls.front().second;
    switch (s.eigh.method) {
      case EighPlan::Method::XsyevBatched:
        checkSolver(cusolverDnXsyevBatched_bufferSize(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t, v, s.n, t,
                                                      w, t, &device, &host, first),
                    "XsyevBatched_bufferSize");
        break;
      case EighPlan::Method::SyevjBatched: {
        int lwork = 0;
        if (f64)
          checkSolver(cusolverDnDsyevjBatched_bufferSize(m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n),
                                                         static_cast<double*>(v), static_cast<int>(s.n), static_cast<double*>(w),
                                                         &lwork, m_.syevj, static_cast<int>(first)),
                      "Dsyevj_bufferSize");
        else
          checkSolver(cusolverDnSsyevjBatched_bufferSize(m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n),
                                                         static_cast<float*>(v), static_cast<int>(s.n), static_cast<float*>(w),
                                                         &lwork, m_.syevj, static_cast<int>(first)),
                      "Ssyevj_bufferSize");
        device = static_cast<size_t>(lwork) * (f64 ? 8 : 4);
        break;
      }
      case EighPlan::Method::XsyevdLoop:
        checkSolver(cusolverDnXsyevd_bufferSize(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t, v, s.n, t, w, t,
                                                &device, &host),
                    "Xsyevd_bufferSize");
        break;
    }
    s.workBytes = std::max<size_t>(device, 16);
    check(cudaMalloc(&s.work, s.workBytes), "cudaMalloc (eigh workspace)");
    device_.push_back(s.work);
    s.hostWork.resize(std::max<size_t>(host, 1));
  }

  void bindHost(BoundStep& s) {
    if (!s.plan->node->operands.empty()) return;  // computed at run time (not capturable)
    std::vector<std::vector<int64_t>> shapes;
    for (const DeviceTensor& t : s.outputs) shapes.push_back(t.shape);
    std::vector<Tensor> results = runtime::evaluateNode(*s.plan->node, {}, shapes);
    for (size_t k = 0; k < results.size(); ++k)
      check(cudaMemcpy(s.outputs[k].data, results[k].data(), results[k].nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy (host op)");
  }

  Module& m_;
  const ir::SymbolBindings& sizes_;
  std::byte* base_ = nullptr;
  std::unordered_set<std::byte*> constants_;
  std::vector<void*> pinned_, device_;
};

// ---- execution --------------------------------------------------------------

/// The streams of one Executable: [0] runs and captures; under capture each
/// nesting level of cond bodies is recorded on its own stream.
struct Streams {
  std::vector<cudaStream_t> s;
  cudaStream_t at(size_t depth) {
    while (s.size() <= depth) {
      cudaStream_t stream;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      s.push_back(stream);
    }
    return s[depth];
  }
  ~Streams() {
    for (cudaStream_t stream : s) cudaStreamDestroy(stream);
  }
};

class Executor {
 public:
  Executor(Module& m, Streams& streams, bool capturing, const runtime::RunOptions& options = {})
      : m_(m), streams_(streams), capturing_(capturing), options_(options) {}

  /// Enqueues the steps; a cancelled run stops enqueuing (the host has
  /// nothing to interrupt on the device), then throws once the queued work
  /// is done.
  void region(BoundRegion& r, size_t depth) {
    for (BoundStep& s : r.steps) {
      if (!capturing_ && options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
        check(cudaStreamSynchronize(streams_.at(0)), "cudaStreamSynchronize");
        throw runtime::Cancelled();
      }
      step(s, depth);
    }
  }

 private:
  void launch(cudaKernel_t fn, dim3 grid, dim3 block, void** args, cudaStream_t stream, const char* what) {
    check(cudaLaunchKernel(reinterpret_cast<const void*>(fn), grid, block, args, 0, stream), what);
  }

  void step(BoundStep& s, size_t depth) {
    cudaStream_t stream = streams_.at(depth);
    switch (s.plan->kind) {
      case StepPlan::Kind::Kernel:
      case StepPlan::Kind::Gemm:
        if (s.empty) return;
        if (s.lt) {
          const ir::kernel::Gemm& g = *s.plan->kernelIR->gemm;
          s.lt->run(s.inputs[static_cast<size_t>(g.a)].data, s.inputs[static_cast<size_t>(g.b)].data,
                    s.inputs[static_cast<size_t>(m_.lt[static_cast<size_t>(s.plan->kernel)]->bias)].data, s.outputs[0].data,
                    stream);
          return;
        }
        launch(m_.functions[static_cast<size_t>(s.plan->kernel)], s.grid, s.block, s.args.data(), stream, "cudaLaunchKernel");
        return;
      case StepPlan::Kind::Eigh: eigh(s, stream); return;
      case StepPlan::Kind::Cond: cond(s, depth); return;
      case StepPlan::Kind::Copy:
        check(cudaMemcpyAsync(s.outputs[0].data, s.inputs[0].data, static_cast<size_t>(s.outputs[0].nbytes()),
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (copy)");
        return;
      case StepPlan::Kind::Host: host(s, stream); return;
    }
  }

  void eigh(BoundStep& s, cudaStream_t stream) {
    if (s.batch == 0 || s.n == 0) return;
    const bool f64 = s.inputs[0].dtype == ir::DType::F64;
    const cudaDataType_t t = f64 ? CUDA_R_64F : CUDA_R_32F;
    const cublasFillMode_t fill = s.plan->uplo == 'L' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    std::byte* v = s.outputs[1].data;
    std::byte* w = s.outputs[0].data;
    const int64_t es = f64 ? 8 : 4;
    check(cudaMemcpyAsync(v, s.inputs[0].data, static_cast<size_t>(s.inputs[0].nbytes()), cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (eigh input)");
    checkSolver(cusolverDnSetStream(m_.solver, stream), "SetStream");
    for (auto [first, count] : s.eigh.calls) {
      std::byte* vc = v + first * s.n * s.n * es;
      std::byte* wc = w + first * s.n * es;
      int* info = s.info + first;
      switch (s.eigh.method) {
        case EighPlan::Method::XsyevBatched:
          checkSolver(cusolverDnXsyevBatched(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t, vc, s.n, t, wc, t,
                                             s.work, s.workBytes, s.hostWork.data(), s.hostWork.size(), info, count),
                      "XsyevBatched");
          break;
        case EighPlan::Method::SyevjBatched:
          if (f64)
            checkSolver(cusolverDnDsyevjBatched(m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n),
                                                reinterpret_cast<double*>(vc), static_cast<int>(s.n), reinterpret_cast<double*>(wc),
                                                static_cast<double*>(s.work), static_cast<int>(s.workBytes / 8), info, m_.syevj,
                                                static_cast<int>(count)),
                        "Dsyevj");
          else
            checkSolver(cusolverDnSsyevjBatched(m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n),
                                                reinterpret_cast<float*>(vc), static_cast<int>(s.n), reinterpret_cast<float*>(wc),
                                                static_cast<float*>(s.work), static_cast<int>(s.workBytes / 4), info, m_.syevj,
                                                static_cast<int>(count)),
                        "Ssyevj");
          break;
        case EighPlan::Method::XsyevdLoop:
          for (int64_t b = 0; b < count; ++b)
            checkSolver(cusolverDnXsyevd(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t, vc + b * s.n * s.n * es,
                                         s.n, t, wc + b * s.n * es, t, s.work, s.workBytes, s.hostWork.data(), s.hostWork.size(),
                                         info + b),
                        "Xsyevd");
          break;
      }
    }
    // Column-major eigenvectors to row-major, in place.
    int64_t n = s.n, batch = s.batch;
    void* vp = v;
    void* args[] = {&vp, &n, &batch};
    const int64_t total = n * n * batch;
    launch(m_.kernel(std::string(kTransposeKernelPrefix) + (f64 ? "f64" : "f32")),
           dim3(static_cast<unsigned>(std::clamp<int64_t>((total + 255) / 256, 1, 1 << 20))), dim3(256), args, stream,
           "cudaLaunchKernel (eigh transpose)");
    const void* input = s.inputs[0].data;
    int lower = s.plan->uplo == 'L';
    int* info = s.info;
    void* checkArgs[] = {&input, &n, &batch, &lower, &info};
    launch(m_.kernel(std::string(kEighCheckKernelPrefix) + (f64 ? "f64" : "f32")),
           dim3(static_cast<unsigned>(std::clamp<int64_t>((total + 255) / 256, 1, 1 << 20))), dim3(256), checkArgs, stream,
           "cudaLaunchKernel (eigh input check)");
    check(cudaMemcpyAsync(s.hostInfo, s.info, 4 * static_cast<size_t>(s.batch), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (eigh info)");
  }

  void cond(BoundStep& s, size_t depth) {
    cudaStream_t stream = streams_.at(depth);
    if (!capturing_) {
      // The one host synchronisation of a plain run: which branch to launch.
      check(cudaMemcpyAsync(s.hostPredicate, s.inputs[0].data, 1, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (predicate)");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (predicate)");
      region(*s.branches[*s.hostPredicate != 0 ? 0 : 1], depth);
      return;
    }
    cudaStreamCaptureStatus status;
    cudaGraph_t graph;
    check(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, nullptr, nullptr, nullptr), "cudaStreamGetCaptureInfo");
    cudaGraphConditionalHandle handle;
    check(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0), "cudaGraphConditionalHandleCreate");
    void* predicate = s.inputs[0].data;
    void* args[] = {&handle, &predicate};
    launch(m_.kernel(kSetConditionKernel), dim3(1), dim3(1), args, stream, "cudaLaunchKernel (set condition)");
    const cudaGraphNode_t* deps = nullptr;
    const cudaGraphEdgeData* edges = nullptr;
    size_t count = 0;
    check(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &deps, &edges, &count), "cudaStreamGetCaptureInfo");
    cudaGraphNodeParams params{};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeIf;
    params.conditional.size = 2;  // [0] when true, [1] (the else body) when false
    cudaGraphNode_t node;
    check(cudaGraphAddNode(&node, graph, deps, edges, count, &params), "cudaGraphAddNode (conditional)");
    check(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies),
          "cudaStreamUpdateCaptureDependencies");
    for (int b = 0; b < 2; ++b) {
      cudaStream_t body = streams_.at(depth + 1);
      check(cudaStreamBeginCaptureToGraph(body, params.conditional.phGraph_out[b], nullptr, nullptr, 0,
                                          cudaStreamCaptureModeThreadLocal),
            "cudaStreamBeginCaptureToGraph");
      region(*s.branches[b], depth + 1);
      cudaGraph_t captured;
      check(cudaStreamEndCapture(body, &captured), "cudaStreamEndCapture (cond body)");
    }
  }

  void host(BoundStep& s, cudaStream_t stream) {
    if (s.plan->node->operands.empty()) return;  // bound once, at bind time
    if (capturing_)
      throw ir::Error(fmt::format("capture: '{}' runs on the host and cannot be part of a CUDA graph", s.plan->node->name()));
    std::vector<Tensor> operands;
    for (const DeviceTensor& t : s.inputs) {
      operands.emplace_back(t.dtype, t.shape);
      check(cudaMemcpyAsync(operands.back().data(), t.data, static_cast<size_t>(t.nbytes()), cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (host op input)");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (host op)");
    std::vector<std::vector<int64_t>> shapes;
    for (const DeviceTensor& t : s.outputs) shapes.push_back(t.shape);
    std::vector<Tensor> results = runtime::evaluateNode(*s.plan->node, operands, shapes);
    for (size_t k = 0; k < results.size(); ++k)
      check(cudaMemcpy(s.outputs[k].data, results[k].data(), results[k].nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy (host op)");
  }

  Module& m_;
  Streams& streams_;
  bool capturing_;
  const runtime::RunOptions& options_;
};

/// eigh's per-matrix info, read after the stream's sync; a failure names
/// its batch index. Resets the arrays for the next replay.
void checkEighInfo(BoundRegion& r) {
  for (BoundStep& s : r.steps) {
    for (auto& b : s.branches)
      if (b) checkEighInfo(*b);
    if (s.plan->kind != StepPlan::Kind::Eigh) continue;
    for (int64_t b = 0; b < s.batch; ++b)
      if (s.hostInfo[b] != 0) {
        const int info = s.hostInfo[b];
        std::memset(s.hostInfo, 0, 4 * static_cast<size_t>(s.batch));
        if (info == kEighNonFiniteInfo) throw runtime::reference::nonFiniteEighInput(b);
        throw ir::Error(fmt::format("eigh: cuSOLVER failed on batch index {} (info {}: {})", b, info,
                                    info > 0 ? "did not converge" : "invalid argument"));
      }
  }
}

std::string describe(const RegionPlan& plan, const Module& m, int indent) {
  std::string out;
  for (const StepPlan& s : plan.steps) {
    std::string what;
    switch (s.kind) {
      case StepPlan::Kind::Kernel:
      case StepPlan::Kind::Gemm:
        what = m.lt[static_cast<size_t>(s.kernel)]
                   ? fmt::format("cublaslt {}", s.kernelIR->name)
                   : fmt::format("kernel {} ({})", s.kernelIR->name,
                                 strategyName(m.source.kernels[static_cast<size_t>(s.kernel)].strategy));
        break;
      case StepPlan::Kind::Eigh: what = "eigh"; break;
      case StepPlan::Kind::Cond: what = "cond"; break;
      case StepPlan::Kind::Host: what = fmt::format("host {}", s.node->name()); break;
      case StepPlan::Kind::Copy: what = "copy"; break;
    }
    out += fmt::format("{:{}}{}\n", "", indent, what);
    if (s.kind == StepPlan::Kind::Cond)
      for (int b = 0; b < 2; ++b) {
        out += fmt::format("{:{}}{}:\n", "", indent + 2, b == 0 ? "then" : "else");
        out += describe(*s.branches[b], m, indent + 4);
      }
  }
  return out;
}

class CudaExecutable final : public runtime::Executable {
 public:
  CudaExecutable(const ir::Graph& g, std::unique_ptr<Module> m, std::unique_ptr<RegionPlan> plan)
      : graph_(g), module_(std::move(m)), plan_(std::move(plan)) {}

  ~CudaExecutable() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (stepsExec_) cudaGraphExecDestroy(stepsExec_);
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const runtime::RunOptions& options) override {
    // One run at a time: runs share the executable's streams and its
    // cuSOLVER handle.
    std::lock_guard lock(mutex_);
    const ir::SymbolBindings sizes = runtime::bindInputs(graph_, inputs);
    Binding binding(*module_, graph_, *plan_, sizes, inputs);
    cudaStream_t stream = streams_.at(0);
    for (size_t k = 0; k < inputs.size(); ++k)
      check(cudaMemcpyAsync(binding.paramTensors[k].data, inputs[k].data(), inputs[k].nbytes(), cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync (input)");
    Executor(*module_, streams_, false, options).region(*binding.region, 0);
    std::vector<Tensor> outputs;
    for (const DeviceTensor& d : binding.resultTensors) {
      outputs.emplace_back(d.dtype, d.shape);
      check(cudaMemcpyAsync(outputs.back().data(), d.data, static_cast<size_t>(d.nbytes()), cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (result)");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    checkEighInfo(*binding.region);
    return outputs;
  }

  void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    std::lock_guard lock(mutex_);
    const ir::SymbolBindings sizes = runtime::bindInputs(graph_, inputs);
    if (outputs.size() != graph_.resultTypes.size())
      throw ir::Error(fmt::format("capture: @{} has {} results, got {} output tensors", graph_.name, graph_.resultTypes.size(),
                                  outputs.size()));
    for (size_t k = 0; k < outputs.size(); ++k) {
      const ir::TensorType want = ir::substitute(graph_.resultTypes[k], sizes);
      if (outputs[k].type() != want)
        throw ir::Error(fmt::format("capture: output {} must be {}, got {}", k, ir::toString(want), ir::toString(outputs[k].type())));
    }
    for (cudaGraphExec_t* e : {&exec_, &stepsExec_})
      if (*e) {
        cudaGraphExecDestroy(*e);
        *e = nullptr;
      }
    captured_.reset();
    auto c = std::make_unique<Captured>();
    c->binding = std::make_unique<Binding>(*module_, graph_, *plan_, sizes, inputs);
    c->inputs = inputs;
    c->outputs = outputs;
    for (const Tensor& t : inputs) c->staging.push_back(pinnedCopyOf(t.nbytes(), *c));
    for (const Tensor& t : outputs) c->staging.push_back(pinnedCopyOf(t.nbytes(), *c));
    cudaStream_t stream = streams_.at(0);
    exec_ = record(stream, [&] {
      for (size_t k = 0; k < inputs.size(); ++k)
        check(cudaMemcpyAsync(c->binding->paramTensors[k].data, c->staging[k], inputs[k].nbytes(), cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync (input)");
      Executor(*module_, streams_, true).region(*c->binding->region, 0);
      for (size_t k = 0; k < outputs.size(); ++k)
        check(cudaMemcpyAsync(c->staging[inputs.size() + k], c->binding->resultTensors[k].data, outputs[k].nbytes(),
                              cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync (result)");
    });
    // The steps alone as a second graph (benchmarks time it without the copies).
    stepsExec_ = record(stream, [&] { Executor(*module_, streams_, true).region(*c->binding->region, 0); });
    captured_ = std::move(c);
  }

  void replay(const runtime::RunOptions& options) override {
    std::lock_guard lock(mutex_);
    runtime::checkCancelled(options);  // a CUDA graph runs whole once launched
    if (!captured_) throw ir::Error("replay: nothing captured (call capture first)");
    Captured& c = *captured_;
    for (size_t k = 0; k < c.inputs.size(); ++k) std::memcpy(c.staging[k], c.inputs[k].data(), c.inputs[k].nbytes());
    cudaStream_t stream = streams_.at(0);
    check(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    for (size_t k = 0; k < c.outputs.size(); ++k)
      std::memcpy(const_cast<Tensor&>(c.outputs[k]).data(), c.staging[c.inputs.size() + k], c.outputs[k].nbytes());
    checkEighInfo(*c.binding->region);
  }

  /// replay() without the graph: every step launched on its own.
  void replayStepByStep() {
    std::lock_guard lock(mutex_);
    if (!captured_) throw ir::Error("replay: nothing captured (call capture first)");
    Captured& c = *captured_;
    cudaStream_t stream = streams_.at(0);
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      std::memcpy(c.staging[k], c.inputs[k].data(), c.inputs[k].nbytes());
      check(cudaMemcpyAsync(c.binding->paramTensors[k].data, c.staging[k], c.inputs[k].nbytes(), cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync (input)");
    }
    Executor(*module_, streams_, false).region(*c.binding->region, 0);
    for (size_t k = 0; k < c.outputs.size(); ++k)
      check(cudaMemcpyAsync(c.staging[c.inputs.size() + k], c.binding->resultTensors[k].data, c.outputs[k].nbytes(),
                            cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (result)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    for (size_t k = 0; k < c.outputs.size(); ++k)
      std::memcpy(const_cast<Tensor&>(c.outputs[k]).data(), c.staging[c.inputs.size() + k], c.outputs[k].nbytes());
    checkEighInfo(*c.binding->region);
  }

  std::string describe() const override { return cuda::describe(*plan_, *module_, 0); }

  double timeSteps(int iterations, bool asGraph) {
    std::lock_guard lock(mutex_);
    if (!captured_) throw ir::Error("timeCapturedSteps: nothing captured (call capture first)");
    cudaStream_t stream = streams_.at(0);
    auto once = [&] {
      if (asGraph) check(cudaGraphLaunch(stepsExec_, stream), "cudaGraphLaunch");
      else Executor(*module_, streams_, false).region(*captured_->binding->region, 0);
    };
    once();  // warm
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int i = 0; i < iterations; ++i) once();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms / iterations;
  }

 private:
  struct Captured {
    std::unique_ptr<Binding> binding;
    std::vector<Tensor> inputs, outputs;
    std::vector<void*> staging;  // pinned: inputs then outputs
    ~Captured() {
      for (void* p : staging) cudaFreeHost(p);
    }
  };

  /// What `body` launches on `stream`, captured and instantiated as one CUDA graph.
  template <typename Body>
  static cudaGraphExec_t record(cudaStream_t stream, Body&& body) {
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
      body();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken) cudaGraphDestroy(broken);
      throw;
    }
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(instantiated, "cudaGraphInstantiate");
    return exec;
  }

  static void* pinnedCopyOf(size_t bytes, Captured&) {
    void* p = nullptr;
    check(cudaMallocHost(&p, std::max<size_t>(bytes, 1)), "cudaMallocHost (staging)");
    return p;
  }

  const ir::Graph& graph_;
  std::unique_ptr<Module> module_;
  std::unique_ptr<RegionPlan> plan_;
  std::mutex mutex_;  // run, capture and replay, one at a time
  Streams streams_;
  std::unique_ptr<Captured> captured_;
  cudaGraphExec_t exec_ = nullptr, stepsExec_ = nullptr;
};

CudaModule emitLowered(const ir::Graph& g, const runtime::LoweredKernels& l) {
  std::vector<const ir::kernel::Kernel*> kernels;
  for (const auto& k : l.kernels) kernels.push_back(k.get());
  EmitOptions options;
  options.conditions = ir::containsOp(g.body, ir::OpId::Cond);
  options.transpose = ir::containsOp(g.body, ir::OpId::Eigh);
  try {
    return emitModule(kernels, options);
  } catch (const ir::Error& e) {
    // Locate the kernel the emitter refused.
    for (size_t i = 0; i < kernels.size(); ++i) {
      try {
        emitModule({kernels[i]});
      } catch (const ir::Error& one) {
        throw ir::LocatedError(l.fused[i]->loc, one.what());
      }
    }
    throw;
  }
}

/// Uploads the plan's constants (cond branches included) once.
void uploadConstants(const RegionPlan& plan, Module& m) {
  for (const SlotPlan& s : plan.slots) {
    if (s.where != SlotPlan::Where::Constant) continue;
    void* d = nullptr;
    check(cudaMalloc(&d, std::max<size_t>(s.constant.nbytes(), 1)), "cudaMalloc (constant)");
    m.constants[&s] = d;
    check(cudaMemcpy(d, s.constant.data(), s.constant.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy (constant)");
  }
  for (const StepPlan& s : plan.steps)
    for (const auto& b : s.branches)
      if (b) uploadConstants(*b, m);
}

}  // namespace

CudaModule emitGraph(const ir::Graph& g) { return emitLowered(g, runtime::lowerKernels(g)); }

std::unique_ptr<runtime::Executable> compileGraph(const ir::Graph& g, const CompileOptions& options, CompileReport* report) {
  const DeviceInfo& dev = device();
  const runtime::LoweredKernels lowered = runtime::lowerKernels(g);
  auto m = std::make_unique<Module>();
  m->source = emitLowered(g, lowered);
  m->multiprocessors = dev.multiprocessors;
  const std::string arch = options.arch.empty() ? dev.arch() : options.arch;
  const CompiledModule cubin = compileModule(m->source.source, arch);
  if (report) {
    report->arch = arch;
    report->kernels = m->source.kernels.size();
    report->nvrtcSeconds = cubin.seconds;
    report->cache = cubin.from == CompiledModule::From::Nvrtc ? "nvrtc" : cubin.from == CompiledModule::From::Memory ? "memory" : "disk";
  }
  check(cudaLibraryLoadData(&m->library, cubin.binary.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), "cudaLibraryLoadData");
  std::vector<std::string> names;
  for (const CudaKernel& k : m->source.kernels) names.push_back(k.name);
  if (m->source.hasConditions) names.push_back(kSetConditionKernel);
  if (m->source.hasTranspose)
    for (const char* t : {"f32", "f64"}) names.push_back(std::string(kTransposeKernelPrefix) + t);
  for (const std::string& name : names) {
    cudaKernel_t k;
    check(cudaLibraryGetKernel(&k, m->library, name.c_str()), "cudaLibraryGetKernel");
    m->kernels[name] = k;
  }
  if (m->source.hasTranspose) {
    checkSolver(cusolverDnCreate(&m->solver), "cusolverDnCreate");
    checkSolver(cusolverDnCreateParams(&m->solverParams), "cusolverDnCreateParams");
    checkSolver(cusolverDnCreateSyevjInfo(&m->syevj), "cusolverDnCreateSyevjInfo");
    m->solverVersion = cusolverVersion();
  }
  for (size_t i = 0; i < lowered.kernels.size(); ++i) {
    m->functions.push_back(m->kernels.at(m->source.kernels[i].name));
    m->lt.push_back(options.matmul == MatmulImpl::CublasLt ? matchLtEpilogue(*lowered.kernels[i]) : std::nullopt);
  }
  auto plan = runtime::planRegion(g.body, g.memoryPlan ? &*g.memoryPlan : nullptr, lowered.kernels, lowered.position);
  uploadConstants(*plan, *m);
  return std::make_unique<CudaExecutable>(g, std::move(m), std::move(plan));
}

void replayStepByStep(runtime::Executable& e) {
  auto* cuda = dynamic_cast<CudaExecutable*>(&e);
  if (!cuda) throw ir::Error("replayStepByStep: not a cuda Executable");
  cuda->replayStepByStep();
}

double timeCapturedSteps(runtime::Executable& e, int iterations, bool asGraph) {
  auto* cuda = dynamic_cast<CudaExecutable*>(&e);
  if (!cuda) throw ir::Error("timeCapturedSteps: not a cuda Executable");
  return cuda->timeSteps(iterations, asGraph);
}

}  // namespace graphc::codegen::cuda
