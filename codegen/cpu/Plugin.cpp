// The cpu backend as a module (libgraphc-cpu.so), loaded by the registry
// the first time the cpu device is asked for.
#include "codegen/BackendPlugin.h"
#include "codegen/cpu/CpuBackend.h"

GRAPHC_BACKEND_PLUGIN(graphc::codegen::cpu::backend())
