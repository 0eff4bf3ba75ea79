// dce: removes nodes none of whose results is used by a later node or a
// return, in every region. Every op is pure (cond's branches are pure
// regions), so an unused result means dead work. Sweeps backwards, so a
// chain of dead nodes goes in one run. Region parameters are never removed:
// they are the region's interface with its op. Changed: a node was removed.
#include "ir/Builder.h"
#include "passes/Passes.h"
#include "passes/RewriteUtils.h"
#include "runtime/reference/Constants.h"

namespace graphc::passes {

PassResult DCEPass::run(ir::Graph& g, ir::DiagnosticEngine&) { return {removeDeadNodes(g.body), false}; }

}  // namespace graphc::passes
