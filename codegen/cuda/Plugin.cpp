// The cuda backend as a module (libgraphc-cuda.so), loaded by the registry
// the first time the cuda device is asked for.
#include "codegen/BackendPlugin.h"
#include "codegen/cuda/CudaBackend.h"

GRAPHC_BACKEND_PLUGIN(graphc::codegen::cuda::backend())
