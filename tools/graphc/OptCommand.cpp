#include <cstdio>

#include <fmt/format.h>

#include "frontend/parser/DiagnosticVerifier.h"
#include "frontend/parser/Parser.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/FileIO.h"
#include "tools/graphc/Commands.h"

namespace graphc::tools {

namespace {

std::shared_ptr<const ir::SourceBuffer> readInput(const std::string& file, ir::DiagnosticEngine& diags) {
  if (file != "-") return frontend::readSourceFile(file, diags);
  auto buffer = std::make_shared<ir::SourceBuffer>();
  buffer->name = "<stdin>";
  try {
    buffer->text = runtime::readFile("/dev/stdin");
  } catch (const ir::Error& e) {
    diags.error({}, e.what());
    return nullptr;
  }
  return buffer;
}

/// Optimises a module; returns the printed result or nullopt.
std::optional<std::string> optimiseModule(ir::Module& module, const OptCommandOptions& options,
                                          ir::DiagnosticEngine& diags) {
  passes::PassManagerOptions pmOptions;
  pmOptions.verifyEach = options.verifyEach;
  pmOptions.printAfterAll = options.printAfterAll;
  pmOptions.printAfterChange = options.printAfterChange;
  pmOptions.timePasses = options.timePasses;
  pmOptions.printWeights = options.printWeights;
  pmOptions.printAfter = {options.printAfter.begin(), options.printAfter.end()};
  passes::PassManager pm(pmOptions);
  if (options.passesGiven) {
    if (!passes::addPipeline(pm, options.passes, diags)) return std::nullopt;
  } else {
    passes::addDefaultPipeline(pm);
  }
  for (const std::string& name : options.printAfter)
    if (!passes::createPass(name)) {
      diags.error({}, fmt::format("--print-ir-after: unknown pass '{}'", name));
      return std::nullopt;
    }
  if (!pm.run(module, diags)) return std::nullopt;
  return ir::print(module);
}

/// Parses and optimises one buffer.
std::optional<std::string> optimise(const std::shared_ptr<const ir::SourceBuffer>& buffer,
                                    const OptCommandOptions& options, ir::DiagnosticEngine& diags) {
  auto module = frontend::parse(buffer, diags);
  if (!module) return std::nullopt;
  return optimiseModule(*module, options, diags);
}

}  // namespace

int listPasses() {
  std::puts("Passes (in registry order; `graphc opt` runs the default pipeline without --passes):");
  for (const passes::PassInfo& p : passes::registeredPasses())
    std::printf("  %-15s %s\n", std::string(p.name).c_str(), std::string(p.description).c_str());
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  std::string pipeline;
  for (const auto& p : pm.passes()) pipeline += (pipeline.empty() ? "" : ",") + std::string(p->name());
  std::printf("Default pipeline: %s\n", pipeline.c_str());
  std::puts("  (then fuse-attention where the device runs attention kernels: cpu)");
  return 0;
}

int optCommand(const OptCommandOptions& options) {
  if (options.file.size() >= 5 && options.file.substr(options.file.size() - 5) == ".onnx") {
    if (options.splitInputFile || options.verifyDiagnostics) {
      std::fputs("graphc: error: --split-input-file and --verify-diagnostics read .graph text, not ONNX models\n",
                 stderr);
      return 2;
    }
    return withErrorsReported([&] {
      std::unique_ptr<ir::Module> module = ir::clone(graphc::loadModel(options.file).graph.module());
      ir::DiagnosticEngine diags(ir::printToStderr());
      auto printed = optimiseModule(*module, options, diags);
      return printed && writeOutput(options.output, *printed) ? 0 : 1;
    });
  }
  ir::DiagnosticEngine fileDiags(ir::printToStderr());
  auto whole = readInput(options.file, fileDiags);
  if (!whole) return 1;
  std::vector<std::shared_ptr<const ir::SourceBuffer>> chunks;
  if (options.splitInputFile)
    chunks = frontend::splitInputFile(*whole);
  else
    chunks.push_back(whole);

  bool ok = true;
  std::string output;
  for (size_t k = 0; k < chunks.size(); ++k) {
    if (options.verifyDiagnostics) {
      ir::DiagnosticEngine diags;  // collected, not printed
      optimise(chunks[k], options, diags);
      std::string report = frontend::verifyDiagnostics(*chunks[k], diags.all());
      if (!report.empty()) {
        std::fputs(report.c_str(), stderr);
        ok = false;
      }
      continue;
    }
    ir::DiagnosticEngine diags(ir::printToStderr());
    auto printed = optimise(chunks[k], options, diags);
    if (!printed) {
      ok = false;
      continue;
    }
    if (k) output += "// -----\n";
    output += *printed;
  }
  if (!options.verifyDiagnostics && !writeOutput(options.output, output)) return 1;
  return ok ? 0 : 1;
}

}  // namespace graphc::tools
