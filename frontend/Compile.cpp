// The compile pipeline of the embedding API, top to bottom in compile():
// clone the graph, dump what came in, verify, run the pass pipeline (each
// pass's IR dumped), dump the kernels, hand the fused graph to the
// backend. The CLI's `run` and `compile` go through the same passes.
#include <chrono>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "frontend/Api.h"
#include "frontend/DebugDump.h"
#include "frontend/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "runtime/Executable.h"
#include "runtime/Interpreter.h"
#ifdef GRAPHC_HAS_ONNX
#include "frontend/onnx/OnnxImporter.h"
#endif
#ifdef GRAPHC_HAS_CPU
#include "codegen/cpu/CpuExecutable.h"
#endif
#ifdef GRAPHC_HAS_CUDA
#include "codegen/cuda/CudaExecutable.h"
#endif

namespace graphc {

std::string_view deviceName(Device d) {
  switch (d) {
    case Device::Reference: return "reference";
    case Device::Cpu: return "cpu";
    case Device::Cuda: return "cuda";
  }
  return "";
}

std::optional<Device> parseDevice(std::string_view name) {
  for (Device d : {Device::Reference, Device::Cpu, Device::Cuda})
    if (deviceName(d) == name) return d;
  return std::nullopt;
}

namespace {
std::string formatAll(const std::vector<ir::Diagnostic>& diagnostics) {
  std::string text;
  for (const ir::Diagnostic& d : diagnostics) text += ir::format(d);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

/// Throws CompileError with what `diags` collected.
[[noreturn]] void fail(ir::DiagnosticEngine& diags) { throw CompileError(diags.all()); }
}  // namespace

CompileError::CompileError(std::vector<ir::Diagnostic> diagnostics)
    : Error(formatAll(diagnostics)), diagnostics(std::move(diagnostics)) {}

// --- Graph ---------------------------------------------------------------

Graph::Graph(std::unique_ptr<ir::Module> module) : module_(std::move(module)) {
  if (!module_ || !module_->entry()) throw Error("a graphc::Graph needs a module with at least one graph");
}

Graph Graph::parse(std::string text, std::string bufferName) {
  ir::DiagnosticEngine diags;
  auto m = frontend::parseString(std::move(text), diags, std::move(bufferName));
  if (!m) fail(diags);
  return Graph(std::move(m));
}

Graph Graph::load(const std::filesystem::path& file) {
  ir::DiagnosticEngine diags;
#ifdef GRAPHC_HAS_ONNX
  if (frontend::isOnnxPath(file.string())) {
    frontend::OnnxImport imported = frontend::importOnnxFile(file.string(), diags);
    if (!imported.module) fail(diags);
    return Graph(std::move(imported.module));
  }
#endif
  auto m = frontend::parseFile(file.string(), diags);
  if (!m) fail(diags);
  return Graph(std::move(m));
}

const ir::Graph& Graph::entry() const { return *module_->entry(); }
std::string Graph::text() const { return ir::print(*module_); }
std::ostream& operator<<(std::ostream& os, const Graph& g) { return os << g.text(); }

// --- Executable ----------------------------------------------------------

namespace {
/// The reference device: the interpreter over the graph as given.
class InterpreterExecutable final : public runtime::Executable {
 public:
  explicit InterpreterExecutable(const ir::Graph& g) : graph_(g) {}

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const runtime::RunOptions& options) override {
    return runtime::interpret(graph_, inputs, nullptr, options);
  }

  void capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) override {
    std::vector<Tensor> expected = runtime::interpret(graph_, inputs);
    if (outputs.size() != expected.size())
      throw Error(fmt::format("capture: @{} has {} results, {} outputs given", graph_.name, expected.size(), outputs.size()));
    for (size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k].type() != expected[k].type())
        throw Error(fmt::format("capture: output {} is {}, the result is {}", k, ir::toString(outputs[k].type()),
                                ir::toString(expected[k].type())));
    std::lock_guard lock(captureMutex_);
    inputs_ = inputs;
    outputs_ = outputs;
    captured_ = true;
  }

  void replay(const runtime::RunOptions& options) override {
    std::lock_guard lock(captureMutex_);
    if (!captured_) throw Error("replay: nothing is captured");
    std::vector<Tensor> results = runtime::interpret(graph_, inputs_, nullptr, options);
    for (size_t k = 0; k < results.size(); ++k) std::memcpy(outputs_[k].data(), results[k].data(), results[k].nbytes());
  }

  std::string describe() const override { return fmt::format("interpret @{}\n", graph_.name); }

 private:
  const ir::Graph& graph_;
  std::mutex captureMutex_;
  std::vector<Tensor> inputs_, outputs_;
  bool captured_ = false;
};
}  // namespace

struct Executable::State {
  Device device;
  Graph optimized;
  std::string dumpDir;
  std::unique_ptr<runtime::Executable> backend;  // refers to optimized's IR
};

std::vector<Tensor> Executable::run(const std::vector<Tensor>& inputs, const RunOptions& options) const {
  return state_->backend->run(inputs, options);
}
void Executable::capture(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) const {
  state_->backend->capture(inputs, outputs);
}
void Executable::replay(const RunOptions& options) const { state_->backend->replay(options); }
Device Executable::device() const { return state_->device; }
const Graph& Executable::optimized() const { return state_->optimized; }
std::string Executable::describe() const { return state_->backend->describe(); }
const std::string& Executable::dumpDir() const { return state_->dumpDir; }

// --- the pipeline --------------------------------------------------------

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::unique_ptr<runtime::Executable> compileForBackend(const ir::Graph& g, const CompileOptions& options,
                                                       DebugDump* dump) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<runtime::Executable> exe;
  if (options.device == Device::Cpu) {
#ifdef GRAPHC_HAS_CPU
    codegen::cpu::CompileReport report;
    exe = codegen::cpu::compileGraph(g, &report);
    if (dump)
      for (const auto& k : report.kernels)
        dump->stage(fmt::format("kernel {}{}", k.kernel, k.fromCache ? " (cached)" : ""), k.seconds, /*detail=*/true);
#else
    throw Error("this graphc was built without the cpu backend (no LLVM 19 at build time)");
#endif
  } else {
#ifdef GRAPHC_HAS_CUDA
    codegen::cuda::CompileOptions cuda;
    cuda.arch = options.arch;
    cuda.matmul = options.cublasLtMatmul ? codegen::cuda::MatmulImpl::CublasLt : codegen::cuda::MatmulImpl::Generated;
    exe = codegen::cuda::compileGraph(g, cuda);
#else
    throw Error("this graphc was built without the cuda backend (no CUDA Toolkit at build time)");
#endif
  }
  if (dump) dump->stage(fmt::format("backend {} (kernels in parallel)", deviceName(options.device)), secondsSince(start));
  return exe;
}
}  // namespace

Executable compile(const Graph& graph, const CompileOptions& options) {
  std::unique_ptr<ir::Module> module = ir::clone(graph.module());
  ir::DiagnosticEngine diags;
  std::unique_ptr<DebugDump> dump = DebugDump::open(DebugDump::rootFor(options.dumpDir), module->entry()->name);
  if (dump) dump->captured(*module);

  if (!ir::verify(*module, diags)) fail(diags);

  if (options.device != Device::Reference) {
    passes::PassManager pm;
    if (options.passes.empty())
      passes::addDefaultPipeline(pm);
    else if (!passes::addPipeline(pm, options.passes, diags))
      fail(diags);
    if (dump) pm.afterPass = [&](const passes::Pass& p, const ir::Module& m, bool) { dump->afterPass(p.name(), m); };
    if (!pm.run(*module, diags)) fail(diags);
  }

  auto state = std::make_shared<Executable::State>(
      Executable::State{options.device, Graph(std::move(module)), dump ? dump->path() : "", nullptr});
  const ir::Graph& g = state->optimized.entry();
  try {
    if (dump && options.device != Device::Reference) dump->kernels(g, deviceName(options.device));
    state->backend = options.device == Device::Reference ? std::make_unique<InterpreterExecutable>(g)
                                                         : compileForBackend(g, options, dump.get());
  } catch (const ir::LocatedError& e) {
    diags.error(e.loc, e.what());
    fail(diags);
  }
  if (dump) dump->finish();
  return Executable(std::move(state));
}

Executable compile(const std::filesystem::path& file, const CompileOptions& options) {
  return compile(Graph::load(file), options);
}

}  // namespace graphc
