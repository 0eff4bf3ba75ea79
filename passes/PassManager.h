// Runs a list of passes over every graph of a module, verifying after each
// pass that changed something (--verify-each, on by default; when the
// verifier fails it prints the IR from before the pass, rebuilt from one
// clone of the input by replaying the passes before it) and printing IR
// dumps with one banner per pass:
//
//   // ----- IR after cse -----
#pragma once

#include <atomic>
#include <functional>
#include <set>
#include <string>

#include "passes/Pass.h"

namespace graphc::passes {

struct PassManagerOptions {
  bool verifyEach = true;
  bool printAfterAll = false;
  bool printAfterChange = false;     // only passes that changed something
  std::set<std::string> printAfter;  // --print-ir-after=PASS
  bool timePasses = false;           // --time-passes: a table of wall times at the end
  /// Dumps elide dense constants above 16 elements unless this is set
  /// (--print-weights).
  bool printWeights = false;
  /// Compares a structural hash of the IR before and after each pass that
  /// says it changed nothing, and fails the pipeline when it did (XLA's
  /// check). On in debug builds.
#ifdef NDEBUG
  bool checkChangedFlag = false;
#else
  bool checkChangedFlag = true;
#endif
  /// Where dumps go; stderr when unset (as mlir-opt).
  std::function<void(const std::string& text)> dumpSink;
  /// Looked at before each pass: when set, run() throws runtime::Cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }

  /// Called after every pass with the module as it is then (tests use it to
  /// round-trip every dump).
  std::function<void(const Pass& pass, const ir::Module& m, bool changed)> afterPass;

  /// False when a pass failed or broke an invariant (diagnosed).
  bool run(ir::Module& m, ir::DiagnosticEngine& diags);

 private:
  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

/// What the default pipeline holds beyond its fixed passes: what the
/// backend it feeds runs (codegen::Backend::attentionKernels).
struct DefaultPipelineOptions {
  bool attentionKernels = false;  // fuse-attention after fuse
};

/// The default pipeline, in order (docs/passes.md): verify, infer-types,
/// canonicalize, fold-batch-norm, cond-fold, cond-to-select, decompose,
/// split-reduction, cse, dce, fuse [, fuse-attention].
void addDefaultPipeline(PassManager& pm, const DefaultPipelineOptions& options = {});

/// Adds the comma-separated passes of `spec` ("cse,dce"); reports an unknown
/// name and returns false.
bool addPipeline(PassManager& pm, std::string_view spec, ir::DiagnosticEngine& diags);

}  // namespace graphc::passes
