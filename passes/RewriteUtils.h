// What the rewriting passes share beyond the IR builders (ir/Builder.h):
// sweeping dead nodes, naming kernels.
#pragma once

#include "ir/Graph.h"

namespace graphc::passes {

/// Removes nodes whose results are unused, in `r` and its nested regions.
bool removeDeadNodes(ir::Region& r);

/// Names every fused op `k<N>_<ops>` from its body's first five distinct
/// ops (`k0_linear_add_relu`; an attention kernel `k3_attention`), N
/// counting from `next` in program order (a cond's branches after the
/// nodes before it), so names are stable and unique — and a name written
/// in the input file never reaches a backend's generated source. Returns
/// whether a name changed.
bool numberKernels(ir::Region& r, int& next);

}  // namespace graphc::passes
