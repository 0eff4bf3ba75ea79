// Whether this machine runs code compiled for a package's target: the same
// architecture and every instruction-set extension the code may use. The
// exporter records LLVM's feature string ("+avx2,+fma,-amx-tile,...");
// every '+' feature is accounted for, failing closed: one the compiler's
// CPU detection (__builtin_cpu_supports, or CPUID where it has no name for
// it) tests must be present; one every x86-64 CPU has, or one LLVM emits
// only through its intrinsics (which graphc's kernels do not call), passes;
// any other is refused by name, since this loader cannot tell whether the
// code uses it. A package built on an AVX-512 machine is thus refused with
// a clear error on one without, instead of dying of SIGILL.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphc::deploy {

/// The architecture of this build ("x86_64", "aarch64").
std::string hostArchitecture();

/// Whether this CPU has the LLVM feature `name`; nullopt when this loader
/// cannot tell (a feature it has never heard of).
std::optional<bool> hostHasCpuFeature(std::string_view name);

/// The '+' features of an LLVM feature string this CPU lacks, and those
/// this loader cannot check.
struct CpuFeatureCheck {
  std::vector<std::string> missing, unknown;
};
CpuFeatureCheck checkCpuFeatures(const std::string& llvmFeatures);

}  // namespace graphc::deploy
