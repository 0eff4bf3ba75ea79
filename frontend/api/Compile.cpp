// The compile driver, the one every way in goes through (the CLI's run,
// bench and compile, compiled(fn), the tools): runPipeline() reads top to
// bottom — clone the graph, dump what came in, verify, the pass pipeline
// (each pass timed and dumped), the kernels dumped — and compile() hands
// the result to the device's backend, emit() asks it for text instead.
#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/BufferAssignment.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/Lowering.h"
#include "deploy/Loader.h"
#include "deploy/Writer.h"
#include "frontend/api/Api.h"
#include "frontend/api/DebugDump.h"
#include "frontend/parser/Parser.h"
#include "ir/Dot.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"

namespace graphc {

namespace {
std::string formatAll(const std::vector<ir::Diagnostic>& diagnostics) {
  std::string text;
  for (const ir::Diagnostic& d : diagnostics) text += ir::format(d);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

/// Throws CompileError with what `diags` collected.
[[noreturn]] void fail(ir::DiagnosticEngine& diags) { throw CompileError(diags.all()); }

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
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

Graph Graph::load(const std::filesystem::path& file) { return loadModel(file).graph; }

const ir::Graph& Graph::entry() const { return *module_->entry(); }
std::string Graph::text() const { return ir::print(*module_); }
std::ostream& operator<<(std::ostream& os, const Graph& g) { return os << g.text(); }

// --- Executable ----------------------------------------------------------

struct Executable::State {
  Device device;
  Graph optimized;
  CompileReport report;
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
const std::string& Executable::dumpDir() const { return state_->report.dumpDir; }
const CompileReport& Executable::report() const { return state_->report; }

// --- the driver ------------------------------------------------------------

namespace {

/// The graph through the pipeline, ready for its backend.
struct Pipelined {
  explicit Pipelined(const codegen::Backend& b) : backend(b) {}
  const codegen::Backend& backend;
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<DebugDump> dump;
  CompileReport report;
  ir::DiagnosticEngine diags;
};

/// Fills `p` (passed in so that `diags` has a stable address for the
/// passes); throws CompileError with the diagnostics of a failing stage.
void runPipeline(Pipelined& p, const Graph& graph, const CompileOptions& options) {
  p.module = ir::clone(graph.module());
  p.dump = DebugDump::open(DebugDump::rootFor(options.dumpDir), p.module->entry()->name);
  if (p.dump) {
    p.dump->captured(*p.module);
    p.report.dumpDir = p.dump->path();
  }

  auto start = std::chrono::steady_clock::now();
  if (!ir::verify(*p.module, p.diags)) fail(p.diags);
  p.report.add("verify input", secondsSince(start));

  if (p.backend.runsPipeline()) {
    passes::PassManager pm(passes::PassManagerOptions{.cancel = options.cancel});
    if (options.passes.empty())
      passes::addDefaultPipeline(pm, {.attentionKernels = p.backend.attentionKernels()});
    else if (!passes::addPipeline(pm, options.passes, p.diags))
      fail(p.diags);
    start = std::chrono::steady_clock::now();
    pm.afterPass = [&](const passes::Pass& pass, const ir::Module& m, bool) {
      p.report.add(fmt::format("pass {}", pass.name()), secondsSince(start));
      if (p.dump) p.dump->afterPass(pass.name(), m);
      start = std::chrono::steady_clock::now();
    };
    if (!pm.run(*p.module, p.diags)) fail(p.diags);
  }
  runtime::checkCompileCancelled(options.cancel);

  if (p.dump && p.backend.runsPipeline()) {
    try {
      p.dump->kernels(*p.module->entry(), p.backend.lowerOptions());
      for (const auto& [file, text] : p.backend.dumpFiles(*p.module->entry())) p.dump->write(file, text);
    } catch (const ir::LocatedError& e) {
      p.diags.error(e.loc, e.what());
      fail(p.diags);
    }
  }
}

}  // namespace

Executable compile(const Graph& graph, const CompileOptions& options) {
  Pipelined p(codegen::backendFor(options.device));
  runPipeline(p, graph, options);
  auto state =
      std::make_shared<Executable::State>(Executable::State{options.device, Graph(std::move(p.module)), {}, nullptr});
  try {
    state->backend = p.backend.compile(state->optimized.entry(), options, p.report);
  } catch (const ir::LocatedError& e) {
    p.diags.error(e.loc, e.what());
    fail(p.diags);
  }
  state->report = std::move(p.report);
  if (p.dump) p.dump->finish(state->report);
  return Executable(std::move(state));
}

Executable compile(const std::filesystem::path& file, const CompileOptions& options) {
  return compile(Graph::load(file), options);
}

void exportPackage(const Graph& graph, const std::filesystem::path& out, const CompileOptions& options,
                   const ExportOptions& exportOptions) {
  deploy::weightStorage(exportOptions.weights);  // an unknown format is an error before anything compiles
  Pipelined p(codegen::backendFor(options.device));
  runPipeline(p, graph, options);
  const ir::Graph& fused = *p.module->entry();
  try {
    nlohmann::json manifest = {{"graph", fused.name}};
    deploy::writeGraphPackage(fused, p.backend, options, p.report, out, std::move(manifest), exportOptions.weights);
  } catch (const ir::LocatedError& e) {
    p.diags.error(e.loc, e.what());
    fail(p.diags);
  }
  if (p.dump) p.dump->finish(p.report);
}

Executable loadPackage(const std::filesystem::path& file) {
  deploy::LoadedPackage loaded = deploy::loadPackage(file);
  auto state = std::make_shared<Executable::State>(
      Executable::State{loaded.device, Graph(std::move(loaded.module)), {}, std::move(loaded.executable)});
  return Executable(std::move(state));
}

std::string emit(const Graph& graph, std::string_view kind, const CompileOptions& options, CompileReport* report) {
  // A backend's own kind names its backend; the IR kinds take the options'.
  const codegen::Backend* own = codegen::backendForEmit(kind);
  if (!own && kind != "graph" && kind != "kernels" && kind != "dot")
    throw Error(fmt::format("nothing in this graphc emits '{}'", kind));
  Pipelined p(own ? *own : codegen::backendFor(options.device));
  runPipeline(p, graph, options);
  std::string out;
  try {
    for (const auto& g : p.module->graphs) {
      if (kind == "graph") continue;
      if (kind == "dot") {
        out += ir::toDot(*g);
      } else if (kind == "kernels") {
        for (const ir::Node* n : codegen::kernel::fusedOps(g->body)) {
          try {
            out += (out.empty() ? "" : "\n") +
                   codegen::kernel::print(codegen::kernel::lower(*n, p.backend.lowerOptions()));
          } catch (const ir::LocatedError&) {
            throw;
          } catch (const ir::Error& e) {  // a fused op written in the input may not lower
            throw ir::LocatedError(n->loc, e.what());
          }
        }
      } else {
        out += own->emit(*g, kind, options, p.report);
      }
    }
    if (kind == "graph") {
      out = ir::print(*p.module, ir::dumpTextOptions(options.printWeights));
      if (p.backend.runsPipeline())
        for (const auto& g : p.module->graphs) out += codegen::describe(codegen::assignBuffers(*g));
    }
  } catch (const ir::LocatedError& e) {
    p.diags.error(e.loc, e.what());
    fail(p.diags);
  }
  if (p.dump) p.dump->finish(p.report);
  if (report) *report = std::move(p.report);
  return out;
}

}  // namespace graphc
