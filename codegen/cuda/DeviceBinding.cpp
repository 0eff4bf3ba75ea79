#include "codegen/cuda/DeviceBinding.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "codegen/kernel/KernelIR.h"
#include "ir/SizeMath.h"
#include "runtime/reference/Interpreter.h"

namespace graphc::codegen::cuda {

namespace {

/// n + extra rounded up to a multiple of `a`: the device arena's layout;
/// throws ir::Error when it overflows int64.
int64_t grow(int64_t n, int64_t extra, int64_t a) {
  std::optional<int64_t> sum = ir::addSizes(n, extra);
  std::optional<int64_t> aligned = sum ? ir::alignUp(*sum, a) : std::nullopt;
  if (!aligned) throw ir::Error("the device arena's size overflows int64");
  return *aligned;
}

}  // namespace

Binding::Binding(Module& m, const ir::Graph& g, const RegionPlan& plan, const ir::SymbolBindings& sizes,
                 const std::vector<Tensor>& inputs)
    : m_(m), sizes_(sizes) {
  int64_t bytes = grow(plan.arenaSize.evaluate(sizes), 0, 256);
  std::vector<DeviceTensor> params, results;
  for (const Tensor& t : inputs) params.push_back(reserve(t.dtype(), t.shape(), bytes));
  // A result that updates an input in place is the input's device buffer.
  for (size_t k = 0; k < g.resultTypes.size(); ++k) {
    const ir::TensorType& t = g.resultTypes[k];
    const ir::Value* updated = g.updatedParam(k);
    results.push_back(updated ? params.at(static_cast<size_t>(updated->index()))
                              : reserve(t.dtype, runtime::concreteShape(ir::substitute(t, sizes)), bytes));
  }
  region = layout(plan, params, results, bytes);
  check(cudaMalloc(reinterpret_cast<void**>(&base_), static_cast<size_t>(std::max<int64_t>(bytes, 256))),
        "cudaMalloc (arena)");
  for (auto& p : params) p.data = base_ + reinterpret_cast<intptr_t>(p.data);
  for (auto& r : results) r.data = base_ + reinterpret_cast<intptr_t>(r.data);
  paramTensors = params;
  resultTensors = results;
  resolve(*region);
}

Binding::~Binding() {
  for (void* p : pinned_) cudaFreeHost(p);
  for (void* p : device_) cudaFree(p);
  if (base_) cudaFree(base_);
}

DeviceTensor Binding::reserve(ir::DType t, std::vector<int64_t> shape, int64_t& bytes) {
  DeviceTensor d;
  d.dtype = t;
  d.shape = std::move(shape);
  d.data = reinterpret_cast<std::byte*>(static_cast<intptr_t>(bytes));
  bytes = grow(bytes, d.nbytes(), 256);
  return d;
}

std::unique_ptr<BoundRegion> Binding::layout(const RegionPlan& plan, const std::vector<DeviceTensor>& params,
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
    codegen::checkKernelSizes(s, sizes_);
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

std::byte* Binding::resolve(std::byte* p) {
  if (constants_.count(p)) return p;
  return base_ + reinterpret_cast<intptr_t>(p);
}

void* Binding::pinned(size_t bytes) {
  void* p = nullptr;
  check(cudaMallocHost(&p, std::max<size_t>(bytes, 1)), "cudaMallocHost");
  std::memset(p, 0, std::max<size_t>(bytes, 1));
  pinned_.push_back(p);
  return p;
}

void Binding::resolve(BoundRegion& r) {
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
      case StepPlan::Kind::Attention: throw ir::Error("cuda: attention kernels run on the cpu backend only");
    }
  }
}

int64_t Binding::extent(const std::vector<ir::Dim>& dims) const {
  return ir::checkedExtent(dims, sizes_, "a kernel's iteration space");
}

void Binding::bindLaunch(BoundStep& s) {
  const codegen::kernel::Kernel& k = *s.plan->kernelIR;
  const CudaKernel& info = m_.source.kernels.at(static_cast<size_t>(s.plan->kernel));
  for (DeviceTensor& t : s.inputs) s.pointers.push_back(t.data);
  for (DeviceTensor& t : s.outputs) s.pointers.push_back(t.data);
  for (const std::string& sym : info.symbols)
    s.extents.push_back(ir::checkedValue(ir::Dim{1, sym}, sizes_, "a kernel's size"));
  const int64_t total = extent(k.outer);
  s.block = dim3(static_cast<unsigned>(info.blockThreads));
  switch (info.strategy) {
    case Strategy::Pointwise: {
      s.extents.push_back(total);
      const int64_t work = (total + info.vectorWidth - 1) / info.vectorWidth;
      s.grid =
          dim3(static_cast<unsigned>(std::clamp<int64_t>((work + 255) / 256, 1, int64_t{m_.multiprocessors} * 16)));
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
      const codegen::kernel::Gemm& g = *k.gemm;
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

void Binding::bindEigh(BoundStep& s) {
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
      checkSolver(cusolverDnXsyevBatched_bufferSize(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t,
                                                    v, s.n, t, w, t, &device, &host, first),
                  "XsyevBatched_bufferSize");
      break;
    case EighPlan::Method::SyevjBatched: {
      int lwork = 0;
      if (f64)
        checkSolver(cusolverDnDsyevjBatched_bufferSize(
                        m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n), static_cast<double*>(v),
                        static_cast<int>(s.n), static_cast<double*>(w), &lwork, m_.syevj, static_cast<int>(first)),
                    "Dsyevj_bufferSize");
      else
        checkSolver(cusolverDnSsyevjBatched_bufferSize(
                        m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n), static_cast<float*>(v),
                        static_cast<int>(s.n), static_cast<float*>(w), &lwork, m_.syevj, static_cast<int>(first)),
                    "Ssyevj_bufferSize");
      device = static_cast<size_t>(lwork) * (f64 ? 8 : 4);
      break;
    }
    case EighPlan::Method::XsyevdLoop:
      checkSolver(cusolverDnXsyevd_bufferSize(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t, v,
                                              s.n, t, w, t, &device, &host),
                  "Xsyevd_bufferSize");
      break;
  }
  s.workBytes = std::max<size_t>(device, 16);
  check(cudaMalloc(&s.work, s.workBytes), "cudaMalloc (eigh workspace)");
  device_.push_back(s.work);
  s.hostWork.resize(std::max<size_t>(host, 1));
}

void Binding::bindHost(BoundStep& s) {
  if (!s.plan->node->operands.empty()) return;  // computed at run time (not capturable)
  std::vector<std::vector<int64_t>> shapes;
  for (const DeviceTensor& t : s.outputs) shapes.push_back(t.shape);
  std::vector<Tensor> results = runtime::evaluateNode(*s.plan->node, {}, shapes);
  for (size_t k = 0; k < results.size(); ++k)
    check(cudaMemcpy(s.outputs[k].data, results[k].data(), results[k].nbytes(), cudaMemcpyHostToDevice),
          "cudaMemcpy (host op)");
}

}  // namespace graphc::codegen::cuda
