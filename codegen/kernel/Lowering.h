// Lowering of a `fused` op to the kernel IR (Lowering.cpp): each body
// value is computed on demand at an index, one index expression per dim of
// the value's shape.
#pragma once

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::kernel {

/// Lowers one fused op; throws ir::Error for a body the lowering cannot
/// express (which the fuse pass does not produce).
Kernel lower(const ir::Node& fused);

}  // namespace graphc::codegen::kernel
