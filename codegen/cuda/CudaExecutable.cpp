#include "codegen/cuda/CudaExecutable.h"

#include <cstring>
#include <mutex>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include "codegen/MxOperands.h"
#include "codegen/StepPlan.h"
#include "codegen/cuda/CudaRuntime.h"
#include "codegen/cuda/DeviceBinding.h"
#include "codegen/cuda/DeviceSteps.h"
#include "runtime/InputUpdates.h"
#include "runtime/reference/Interpreter.h"

namespace graphc::codegen::cuda {

namespace {

using runtime::Tensor;

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
    runtime::checkUpdatedInputs(graph_, inputs);
    Binding binding(*module_, graph_, *plan_, sizes, inputs);
    cudaStream_t stream = streams_.at(0);
    for (size_t k = 0; k < inputs.size(); ++k)
      check(cudaMemcpyAsync(binding.paramTensors[k].data, inputs[k].data(), inputs[k].nbytes(), cudaMemcpyHostToDevice,
                            stream),
            "cudaMemcpyAsync (input)");
    Executor(*module_, streams_, false, options).region(*binding.region, 0);
    // A result that updates an input is copied back into the input's tensor.
    std::vector<Tensor> outputs = runtime::outputsFor(graph_, inputs, sizes);
    for (size_t k = 0; k < outputs.size(); ++k) {
      const DeviceTensor& d = binding.resultTensors[k];
      check(cudaMemcpyAsync(outputs[k].data(), d.data, static_cast<size_t>(d.nbytes()), cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (result)");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    checkEighInfo(*binding.region);
    return outputs;
  }

  void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    std::lock_guard lock(mutex_);
    const ir::SymbolBindings sizes = runtime::bindInputs(graph_, inputs);
    runtime::checkCaptureOutputs(graph_, inputs, outputs, sizes);
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
        check(cudaMemcpyAsync(c->binding->paramTensors[k].data, c->staging[k], inputs[k].nbytes(),
                              cudaMemcpyHostToDevice, stream),
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
      check(cudaMemcpyAsync(c.binding->paramTensors[k].data, c.staging[k], c.inputs[k].nbytes(), cudaMemcpyHostToDevice,
                            stream),
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
      if (asGraph)
        check(cudaGraphLaunch(stepsExec_, stream), "cudaGraphLaunch");
      else
        Executor(*module_, streams_, false).region(*captured_->binding->region, 0);
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

/// Uploads the plan's constants (cond branches included) once; an MX
/// weight stays in its format (the GEMM dequantises it as it loads).
void uploadConstants(const RegionPlan& plan, Module& m) {
  for (const SlotPlan& s : plan.slots) {
    if (s.where != SlotPlan::Where::Constant) continue;
    const std::vector<std::byte> mx = s.mx ? mxBuffer(*s.mx) : std::vector<std::byte>();
    const void* bytes = s.mx ? static_cast<const void*>(mx.data()) : s.constant.data();
    const size_t size = s.mx ? mx.size() : s.constant.nbytes();
    void* d = nullptr;
    check(cudaMalloc(&d, std::max<size_t>(size, 1)), "cudaMalloc (constant)");
    m.constants[&s] = d;
    check(cudaMemcpy(d, bytes, size, cudaMemcpyHostToDevice), "cudaMemcpy (constant)");
  }
  for (const StepPlan& s : plan.steps)
    for (const auto& b : s.branches)
      if (b) uploadConstants(*b, m);
}

}  // namespace

CudaModule emitLowered(const ir::Graph& g, const codegen::LoweredKernels& l) {
  std::vector<const codegen::kernel::Kernel*> kernels;
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

CudaModule emitGraph(const ir::Graph& g) { return emitLowered(g, codegen::lowerKernels(g)); }

std::unique_ptr<runtime::Executable> makeExecutable(const ir::Graph& g, const codegen::LoweredKernels& lowered,
                                                    CudaModule source, std::string_view image, MatmulImpl matmul) {
  auto plan = codegen::planGraph(g, lowered.kernels, lowered.position);
  codegen::checkMxUses(*plan, readsMxInput);  // before the device: a package's damage is reported as such
  const DeviceInfo& dev = device();
  auto m = std::make_unique<Module>();
  m->source = std::move(source);
  m->multiprocessors = dev.multiprocessors;
  // PTX is text the driver compiles, and must end in a NUL; a cubin is used as it is.
  const std::string ptx = image.starts_with(
                              "\x7f"
                              "ELF")
                              ? std::string()
                              : std::string(image);
  const void* data = ptx.empty() ? static_cast<const void*>(image.data()) : ptx.c_str();
  check(cudaLibraryLoadData(&m->library, data, nullptr, nullptr, 0, nullptr, nullptr, 0), "cudaLibraryLoadData");
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
    m->lt.push_back(matmul == MatmulImpl::CublasLt ? matchLtEpilogue(*lowered.kernels[i]) : std::nullopt);
  }
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
