// Kernel IR → LLVM IR: one function per kernel, built with IRBuilder, in the
// form LLVM's loop vectoriser wants (counted innermost loops over the last
// dimension, affine nsw index arithmetic, no calls but vectorisable libm
// ones). Every kernel function has the same signature,
//
//   void f(ptr buffers, ptr sizes, i64 begin, i64 end [, ptr acc])
//
// buffers: the inputs then the outputs, one data pointer each; sizes: the
// values of the kernel's symbolic sizes, in KernelSignature::symbols order;
// [begin, end): the part of the flattened outer iteration space this call
// computes (the thread pool splits it); acc (matmul_epilogue and attention
// only): the GEMM accumulator of outer points begin..end-1, row-major, f32
// (f64 for an f64 GEMM), which the BLAS call just wrote and which is still
// in cache. An attention kernel's function is its scores' epilogue: it
// writes the scores back into acc, in place.
//
// Semantics are the kernel IR's (tests/differential/KernelEval.cpp is the
// executable statement of them): each value is rounded to its dtype, with
// f16/bf16 computed in f32; reductions accumulate floats in f64 and integers
// in i64, in one thread per row, so results do not depend on the thread
// count.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpu/CompiledKernel.h"
#include "codegen/kernel/KernelIR.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace graphc::codegen::cpu {

/// Emits `k` as a function named `name` into `m` (whose data layout and
/// triple are set); throws ir::Error for an expression it cannot lower.
llvm::Function* emitKernel(const codegen::kernel::Kernel& k, const std::string& name, llvm::Module& m);

}  // namespace graphc::codegen::cpu
