// The cuda backend linked into a program (tests, developer tools) and
// registered before main, instead of loaded as a module.
#include "codegen/BackendPlugin.h"
#include "codegen/cuda/CudaBackend.h"

namespace {
const graphc::codegen::BuiltinBackend registered(graphc::codegen::cuda::backend());
}  // namespace
