// A compiled kernel as the cpu Executable calls it: the function's
// address, what keeps its machine code mapped (a JIT dylib, or an exported
// package's shared object), and the symbolic sizes it reads. No LLVM here:
// the compiler-free runtime (deploy/) builds these from a loaded package.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::cpu {

struct KernelSignature {
  std::vector<std::string> symbols;  // what sizes[k] holds
};

/// The name of kernel `i` (in fusedOps order) in an exported package's
/// shared object.
inline std::string exportedKernelSymbol(size_t i) { return "graphc_kernel_" + std::to_string(i); }

/// The symbolic sizes a kernel reads, sorted (the `sizes` argument's order).
KernelSignature signatureOf(const codegen::kernel::Kernel& k);

struct CompiledKernel {
  /// void(buffers, sizes, begin, end); matmul_epilogue and attention
  /// kernels take the accumulator as a fifth argument (see
  /// KernelEmitter.h), which an attention kernel writes its scores into.
  using Fn = void (*)(void* const* buffers, const int64_t* sizes, int64_t begin, int64_t end);
  using EpilogueFn = void (*)(void* const* buffers, const int64_t* sizes, int64_t begin, int64_t end, const void* acc);
  using ScoresFn = void (*)(void* const* buffers, const int64_t* sizes, int64_t begin, int64_t end, float* scores);

  void* address = nullptr;
  std::shared_ptr<const void> code;  // keeps the machine code mapped
  KernelSignature signature;
  double compileSeconds = 0;  // emit + optimise + JIT (or read + link); 0 from memory
  /// Where the code came from: compiled now, the process's memory cache,
  /// the disk cache (an object an earlier process compiled), or an
  /// exported package's shared object.
  enum class From { Compiled, Memory, Disk, Package } from = From::Compiled;

  Fn pointwise() const { return reinterpret_cast<Fn>(address); }
  EpilogueFn epilogue() const { return reinterpret_cast<EpilogueFn>(address); }
  ScoresFn scores() const { return reinterpret_cast<ScoresFn>(address); }
};

}  // namespace graphc::codegen::cpu
