// A direct evaluator of the kernel IR (loop by loop, element by element),
// so the differential test can check the lowering of every kernel against
// the reference interpreter running the fused op's body.
#pragma once

#include <vector>

#include "codegen/kernel/KernelIR.h"
#include "runtime/Tensor.h"

namespace graphc::difftest {

std::vector<runtime::Tensor> evaluateKernel(const codegen::kernel::Kernel& k,
                                            const std::vector<runtime::Tensor>& inputs,
                                            const ir::SymbolBindings& sizes);

}  // namespace graphc::difftest
