// The shared object of an exported package: every kernel of a fused graph
// compiled to a position-independent object by the JIT's code generator
// (Jit::compileObject: the same CPU, features and pipeline as an in-process
// compile, so the same bits come out), each defining
// exportedKernelSymbol(i), linked by the system linker (`ld`, binutils)
// into one ELF shared object that needs only glibc's libm and libmvec. The
// compiler-free runtime dlopens it (deploy/Loader.cpp).
#pragma once

#include <string>

#include "codegen/Backend.h"
#include "codegen/StepPlan.h"

namespace graphc::codegen::cpu {

/// The shared object's bytes. Throws ir::LocatedError at a kernel that
/// does not compile, ir::Error when the linker is missing or fails (with
/// its output). `report` receives the compile and link times.
std::string buildKernelLibrary(const codegen::LoweredKernels& lowered, CompileReport& report);

}  // namespace graphc::codegen::cpu
