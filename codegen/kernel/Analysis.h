// What both code generators (and the executables) ask of a graph's
// kernels: which fused ops a region holds, the symbols a kernel reads, the
// order of its reductions, and whether it stores an extremum of a row.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::kernel {

/// The fused ops of a region, those inside cond branches included, in
/// program order.
std::vector<const ir::Node*> fusedOps(const ir::Region& r);

/// The symbolic sizes a kernel reads (its buffers, loops and indices), sorted.
std::vector<std::string> symbolsOf(const Kernel& k);

/// The Reduce expressions the stores read, each after the reductions it
/// depends on (softmax's amax before its sum): the order a row computes them.
std::vector<const Expr*> reductionOrder(const Kernel& k);

/// The amax or amin whose row result a store writes (directly or through
/// pointwise ops), if any: over an empty row it has no value to write,
/// which the executables report as the reference interpreter does.
std::optional<OpId> storedExtremum(const Kernel& k);

}  // namespace graphc::codegen::kernel
