// Whether this machine runs code compiled for a package's target: the same
// architecture and every instruction-set extension the code may use. The
// exporter records LLVM's feature string ("+avx2,+fma,-amx-tile,...");
// each '+' feature graphc knows how to test (the x86 SIMD extensions LLVM's
// vectoriser uses) is checked with the compiler's CPU detection
// (__builtin_cpu_supports), so a package built on an AVX-512 machine is
// refused with a clear error on one without, instead of dying of SIGILL.
#pragma once

#include <string>

namespace graphc::deploy {

/// The architecture of this build ("x86_64", "aarch64").
std::string hostArchitecture();

/// The features of `llvmFeatures` this CPU lacks, comma-separated; empty
/// when it has them all.
std::string missingCpuFeatures(const std::string& llvmFeatures);

}  // namespace graphc::deploy
