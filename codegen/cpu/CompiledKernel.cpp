#include "codegen/cpu/CompiledKernel.h"

#include "codegen/kernel/Analysis.h"

namespace graphc::codegen::cpu {

KernelSignature signatureOf(const codegen::kernel::Kernel& k) { return {codegen::kernel::symbolsOf(k)}; }

}  // namespace graphc::codegen::cpu
