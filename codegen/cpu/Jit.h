// The CPU backend's compiler: kernel IR → LLVM IR (KernelEmitter) → LLVM's
// O3 pipeline for the host CPU, with glibc's libmvec as the vector math
// library → machine code through one process-wide ORC LLJIT. Kernels are
// cached in memory by their kernel IR text (the name left out), so a kernel
// that two graphs, or two compiles of one graph, share is compiled once;
// the cache keeps the 2048 most recently used, and a kernel's code is freed
// when neither the cache nor an Executable refers to it. Object files are
// also kept on disk (codegen/DiskCache.h, under cpu/), keyed by the kernel
// IR, the LLVM version and the host CPU with its features, so a second
// process skips LLVM's optimiser and code generator.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "codegen/cpu/CompiledKernel.h"
#include "codegen/cpu/KernelEmitter.h"

namespace graphc::codegen::cpu {

struct KernelCode;

class Jit {
 public:
  struct Impl;
  /// The process's JIT (created on first use; throws ir::Error if LLVM
  /// cannot target the host).
  static Jit& instance();

  /// Compiles `k`, or returns the cached kernel with the same IR (then
  /// `from` says which cache). Thread-safe: kernels
  /// compiled from several threads compile in parallel.
  std::shared_ptr<const CompiledKernel> compile(const codegen::kernel::Kernel& k);

  /// The optimised LLVM IR / host assembly of `k` (what --emit=llvm and
  /// --emit=asm print); the function is named after the kernel.
  std::string emitLLVM(const codegen::kernel::Kernel& k);
  std::string emitAsm(const codegen::kernel::Kernel& k);

  /// `k` as a position-independent ELF object defining `symbol`, for the
  /// shared object of an exported package; compiled as compile() compiles
  /// it (same CPU, features and pipeline), so it computes the same bits.
  std::string compileObject(const codegen::kernel::Kernel& k, const std::string& symbol);
  /// What the code is compiled for: "triple", "cpu", "features" (LLVM's
  /// feature string, "+avx2,+fma,-amx-tile,..."), "llvm".
  std::map<std::string, std::string> target() const;

  ~Jit();

 private:
  Jit();
  std::shared_ptr<Impl> impl_;  // shared with each kernel's code (KernelCode)
};

}  // namespace graphc::codegen::cpu
