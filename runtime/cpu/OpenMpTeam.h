// Finds an OpenMP runtime already loaded in the process and runs the cpu
// backend's parallel loops on its team (ThreadPool::runOnTeam).
//
// Why: graphc called from PyTorch shares the cores with PyTorch's libgomp,
// whose threads spin (GOMP_SPINCOUNT, 300000 pauses by default) after each
// PyTorch op. graphc's own workers, started beside them, are then
// descheduled in the middle of a kernel, and a training step of many short
// graphc calls between PyTorch ops ran 2-3x slower than its kernels. On
// the team's threads graphc's chunks pick up exactly where those threads
// are spinning, as Inductor's OpenMP kernels do.
#pragma once

#include <string>

namespace graphc::runtime {

/// Looks among the loaded shared objects for one that exports the GNU
/// OpenMP entry point GOMP_parallel (libgomp; LLVM's libomp and Intel's
/// libiomp5 export it too) and, when found, makes the global ThreadPool
/// run on its team. Returns the object's path, or "" when no OpenMP
/// runtime is loaded (the pool then keeps its own workers). Never loads a
/// library that is not already loaded.
std::string runOnLoadedOpenMpTeam();

}  // namespace graphc::runtime
