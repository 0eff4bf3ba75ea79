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

#include <memory>
#include <string>

#include "codegen/cpu/KernelEmitter.h"

namespace graphc::codegen::cpu {

struct CompiledKernel {
  /// void(buffers, sizes, begin, end); matmul_epilogue kernels take the
  /// accumulator as a fifth argument (see KernelEmitter.h).
  using Fn = void (*)(void* const* buffers, const int64_t* sizes, int64_t begin, int64_t end);
  using EpilogueFn = void (*)(void* const* buffers, const int64_t* sizes, int64_t begin, int64_t end, const void* acc);

  void* address = nullptr;
  std::shared_ptr<const void> code;  // keeps the machine code mapped
  KernelSignature signature;
  double compileSeconds = 0;  // emit + optimise + JIT (or read + link); 0 from memory
  /// Where the code came from: compiled now, the process's memory cache, or
  /// the disk cache (an object an earlier process compiled).
  enum class From { Compiled, Memory, Disk } from = From::Compiled;

  Fn pointwise() const { return reinterpret_cast<Fn>(address); }
  EpilogueFn epilogue() const { return reinterpret_cast<EpilogueFn>(address); }
};

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

  ~Jit();

 private:
  Jit();
  std::shared_ptr<Impl> impl_;  // shared with each kernel's code (KernelCode)
};

}  // namespace graphc::codegen::cpu
