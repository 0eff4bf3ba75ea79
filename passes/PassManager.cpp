#include "passes/PassManager.h"

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Executable.h"

namespace graphc::passes {

bool PassManager::run(ir::Module& m, ir::DiagnosticEngine& diags) {
  auto dump = [&](const std::string& text) {
    if (options_.dumpSink)
      options_.dumpSink(text);
    else
      std::fputs(text.c_str(), stderr);
  };
  std::vector<std::pair<std::string_view, double>> timings;
  const ir::AttributeTextOptions text = ir::dumpTextOptions(options_.printWeights);
  // What the verifier prints should a pass break an invariant is the IR
  // before that pass. Cloning before every pass would cost a copy of the
  // module per pass (most of the pipeline's time on a 100k-node graph), so
  // one clone of the input is kept, weights shared, and the IR before
  // pass i is rebuilt by replaying passes 0..i-1 on it — only on failure.
  const std::unique_ptr<ir::Module> input = options_.verifyEach ? ir::clone(m) : nullptr;
  auto irBefore = [&](size_t failed) {
    std::unique_ptr<ir::Module> before = ir::clone(*input);
    ir::DiagnosticEngine ignored;
    for (size_t i = 0; i < failed; ++i)
      for (const auto& g : before->graphs) passes_[i]->run(*g, ignored);
    return before;
  };
  for (size_t index = 0; index < passes_.size(); ++index) {
    const auto& pass = passes_[index];
    runtime::checkCompileCancelled(options_.cancel);
    // The full text form is the structural hash: equal text, equal graph.
    const std::string beforeText = options_.checkChangedFlag ? ir::print(m) : std::string();
    const auto start = std::chrono::steady_clock::now();
    bool changed = false;
    for (const auto& g : m.graphs) {
      PassResult r = pass->run(*g, diags);
      if (r.failed) {
        diags.error(g->loc, fmt::format("pass '{}' failed on @{}", pass->name(), g->name));
        return false;
      }
      changed |= r.changed;
    }
    timings.emplace_back(pass->name(),
                         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!changed && options_.checkChangedFlag && ir::print(m) != beforeText) {
      diags.error({}, fmt::format("pass '{}' reported no change but changed the IR", pass->name()));
      return false;
    }
    if (changed && options_.verifyEach) {
      if (!ir::verify(m, diags)) {
        diags.error({}, fmt::format("the IR after pass '{}' is invalid: the pass broke an invariant", pass->name()));
        dump(fmt::format("// ----- IR before {} (which broke an invariant) -----\n{}", pass->name(),
                         ir::print(*irBefore(index), text)));
        return false;
      }
    }
    const bool wanted = options_.printAfterAll || options_.printAfter.count(std::string(pass->name())) ||
                        (options_.printAfterChange && changed);
    if (wanted) dump(fmt::format("// ----- IR after {} -----\n{}", pass->name(), ir::print(m, text)));
    if (afterPass) afterPass(*pass, m, changed);
  }
  if (options_.timePasses) {
    double total = 0;
    std::string table = "// ----- pass timing (wall clock) -----\n";
    for (const auto& [name, ms] : timings) {
      table += fmt::format("//   {:<16} {:>10.3f} ms\n", name, ms);
      total += ms;
    }
    table += fmt::format("//   {:<16} {:>10.3f} ms\n", "total", total);
    dump(table);
  }
  return true;
}

void addDefaultPipeline(PassManager& pm, const DefaultPipelineOptions& options) {
  pm.add(createPass("verify"));
  pm.add(createPass("infer-types"));
  pm.add(createPass("canonicalize"));
  pm.add(createPass("fold-batch-norm"));
  pm.add(createPass("cond-fold"));
  pm.add(createPass("cond-to-select"));
  pm.add(createPass("decompose"));
  pm.add(createPass("split-reduction"));
  pm.add(createPass("cse"));
  pm.add(createPass("dce"));
  pm.add(createPass("fuse"));
  if (options.attentionKernels) pm.add(createPass("fuse-attention"));
}

bool addPipeline(PassManager& pm, std::string_view spec, ir::DiagnosticEngine& diags) {
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string_view name = spec.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (!name.empty()) {
      auto pass = createPass(name);
      if (!pass) {
        diags.error({}, fmt::format("unknown pass '{}' (graphc --list-passes lists them)", name));
        return false;
      }
      pm.add(std::move(pass));
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return true;
}

}  // namespace graphc::passes
