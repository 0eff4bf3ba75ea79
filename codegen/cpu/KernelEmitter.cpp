#include "codegen/cpu/KernelEmitter.h"

#include "codegen/cpu/Emitter.h"

namespace graphc::codegen::cpu {

llvm::Function* emitKernel(const Kernel& k, const std::string& name, llvm::Module& m) {
  return Emitter(k, name, m).emit();
}

}  // namespace graphc::codegen::cpu
