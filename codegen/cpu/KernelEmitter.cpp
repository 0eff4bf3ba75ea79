#include "codegen/cpu/KernelEmitter.h"

#include "codegen/cpu/Emitter.h"
#include "codegen/kernel/Analysis.h"

namespace graphc::codegen::cpu {

KernelSignature signatureOf(const Kernel& k) { return {symbolsOf(k)}; }

llvm::Function* emitKernel(const Kernel& k, const std::string& name, llvm::Module& m) {
  return Emitter(k, name, m).emit();
}

}  // namespace graphc::codegen::cpu
