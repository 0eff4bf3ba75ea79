// verify: checks the invariants of ir/Verifier.h. It changes nothing and
// fails when the graph is invalid, so `--passes=verify` is a checker.
#include "ir/Verifier.h"
#include "passes/Passes.h"

namespace graphc::passes {

PassResult VerifyPass::run(ir::Graph& g, ir::DiagnosticEngine& diags) { return {false, !ir::verify(g, diags)}; }

}  // namespace graphc::passes
