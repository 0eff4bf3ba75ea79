// What the rewriting passes share beyond the IR builders (ir/Builder.h):
// sweeping dead nodes.
#pragma once

#include "ir/Graph.h"

namespace graphc::passes {

/// Removes nodes whose results are unused, in `r` and its nested regions.
bool removeDeadNodes(ir::Region& r);

}  // namespace graphc::passes
