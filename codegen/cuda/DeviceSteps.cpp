#include "codegen/cuda/DeviceSteps.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "runtime/reference/Interpreter.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cuda {

void Executor::region(BoundRegion& r, size_t depth) {
  for (BoundStep& s : r.steps) {
    if (!capturing_ && options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
      check(cudaStreamSynchronize(streams_.at(0)), "cudaStreamSynchronize");
      throw runtime::Cancelled();
    }
    step(s, depth);
  }
}

void Executor::launch(cudaKernel_t fn, dim3 grid, dim3 block, void** args, cudaStream_t stream, const char* what) {
  check(cudaLaunchKernel(reinterpret_cast<const void*>(fn), grid, block, args, 0, stream), what);
}

void Executor::step(BoundStep& s, size_t depth) {
  cudaStream_t stream = streams_.at(depth);
  switch (s.plan->kind) {
    case StepPlan::Kind::Kernel:
    case StepPlan::Kind::Gemm:
      if (s.empty) return;
      if (s.lt) {
        const codegen::kernel::Gemm& g = *s.plan->kernelIR->gemm;
        s.lt->run(s.inputs[static_cast<size_t>(g.a)].data, s.inputs[static_cast<size_t>(g.b)].data,
                  s.inputs[static_cast<size_t>(m_.lt[static_cast<size_t>(s.plan->kernel)]->bias)].data,
                  s.outputs[0].data, stream);
        return;
      }
      launch(m_.functions[static_cast<size_t>(s.plan->kernel)], s.grid, s.block, s.args.data(), stream,
             "cudaLaunchKernel");
      return;
    case StepPlan::Kind::Eigh: eigh(s, stream); return;
    case StepPlan::Kind::Cond: cond(s, depth); return;
    case StepPlan::Kind::Copy:
      check(cudaMemcpyAsync(s.outputs[0].data, s.inputs[0].data, static_cast<size_t>(s.outputs[0].nbytes()),
                            cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (copy)");
      return;
    case StepPlan::Kind::Host: host(s, stream); return;
    case StepPlan::Kind::Attention: throw ir::Error("cuda: attention kernels run on the cpu backend only");
  }
}

void Executor::eigh(BoundStep& s, cudaStream_t stream) {
  if (s.batch == 0 || s.n == 0) return;
  const bool f64 = s.inputs[0].dtype == ir::DType::F64;
  const cudaDataType_t t = f64 ? CUDA_R_64F : CUDA_R_32F;
  const cublasFillMode_t fill = s.plan->uplo == 'L' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  std::byte* v = s.outputs[1].data;
  std::byte* w = s.outputs[0].data;
  const int64_t es = f64 ? 8 : 4;
  check(
      cudaMemcpyAsync(v, s.inputs[0].data, static_cast<size_t>(s.inputs[0].nbytes()), cudaMemcpyDeviceToDevice, stream),
      "cudaMemcpyAsync (eigh input)");
  checkSolver(cusolverDnSetStream(m_.solver, stream), "SetStream");
  for (auto [first, count] : s.eigh.calls) {
    std::byte* vc = v + first * s.n * s.n * es;
    std::byte* wc = w + first * s.n * es;
    int* info = s.info + first;
    switch (s.eigh.method) {
      case EighPlan::Method::XsyevBatched:
        checkSolver(
            cusolverDnXsyevBatched(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t, vc, s.n, t, wc,
                                   t, s.work, s.workBytes, s.hostWork.data(), s.hostWork.size(), info, count),
            "XsyevBatched");
        break;
      case EighPlan::Method::SyevjBatched:
        if (f64)
          checkSolver(
              cusolverDnDsyevjBatched(m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n),
                                      reinterpret_cast<double*>(vc), static_cast<int>(s.n),
                                      reinterpret_cast<double*>(wc), static_cast<double*>(s.work),
                                      static_cast<int>(s.workBytes / 8), info, m_.syevj, static_cast<int>(count)),
              "Dsyevj");
        else
          checkSolver(
              cusolverDnSsyevjBatched(m_.solver, CUSOLVER_EIG_MODE_VECTOR, fill, static_cast<int>(s.n),
                                      reinterpret_cast<float*>(vc), static_cast<int>(s.n), reinterpret_cast<float*>(wc),
                                      static_cast<float*>(s.work), static_cast<int>(s.workBytes / 4), info, m_.syevj,
                                      static_cast<int>(count)),
              "Ssyevj");
        break;
      case EighPlan::Method::XsyevdLoop:
        for (int64_t b = 0; b < count; ++b)
          checkSolver(cusolverDnXsyevd(m_.solver, m_.solverParams, CUSOLVER_EIG_MODE_VECTOR, fill, s.n, t,
                                       vc + b * s.n * s.n * es, s.n, t, wc + b * s.n * es, t, s.work, s.workBytes,
                                       s.hostWork.data(), s.hostWork.size(), info + b),
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
         dim3(static_cast<unsigned>(std::clamp<int64_t>((total + 255) / 256, 1, 1 << 20))), dim3(256), checkArgs,
         stream, "cudaLaunchKernel (eigh input check)");
  check(cudaMemcpyAsync(s.hostInfo, s.info, 4 * static_cast<size_t>(s.batch), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (eigh info)");
}

void Executor::cond(BoundStep& s, size_t depth) {
  cudaStream_t stream = streams_.at(depth);
  if (!capturing_) {
    // The one host synchronisation of a plain run: which branch to launch.
    check(cudaMemcpyAsync(s.hostPredicate, s.inputs[0].data, 1, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (predicate)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (predicate)");
    region(*s.branches[*s.hostPredicate != 0 ? 0 : 1], depth);
    return;
  }
  cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  check(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, nullptr, nullptr, nullptr),
        "cudaStreamGetCaptureInfo");
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

void Executor::host(BoundStep& s, cudaStream_t stream) {
  if (s.plan->node->operands.empty()) return;  // bound once, at bind time
  if (capturing_)
    throw ir::Error(
        fmt::format("capture: '{}' runs on the host and cannot be part of a CUDA graph", s.plan->node->name()));
  std::vector<Tensor> operands;
  for (const DeviceTensor& t : s.inputs) {
    operands.emplace_back(t.dtype, t.shape);
    check(cudaMemcpyAsync(operands.back().data(), t.data, static_cast<size_t>(t.nbytes()), cudaMemcpyDeviceToHost,
                          stream),
          "cudaMemcpyAsync (host op input)");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (host op)");
  std::vector<std::vector<int64_t>> shapes;
  for (const DeviceTensor& t : s.outputs) shapes.push_back(t.shape);
  std::vector<Tensor> results = runtime::evaluateNode(*s.plan->node, operands, shapes);
  for (size_t k = 0; k < results.size(); ++k)
    check(cudaMemcpy(s.outputs[k].data, results[k].data(), results[k].nbytes(), cudaMemcpyHostToDevice),
          "cudaMemcpy (host op)");
}

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
      case StepPlan::Kind::Attention: what = fmt::format("attention {}", s.kernelIR->name); break;
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

}  // namespace graphc::codegen::cuda
