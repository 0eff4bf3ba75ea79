// The backend registry: the one place that knows which backends this build
// has. The reference device is always there; cpu when LLVM 19 was found
// (GRAPHC_HAS_CPU), cuda when the CUDA Toolkit was (GRAPHC_HAS_CUDA).
#include <fmt/format.h>

#include "codegen/Backend.h"
#include "codegen/ReferenceBackend.h"
#include "ir/Diagnostics.h"
#ifdef GRAPHC_HAS_CPU
#include "codegen/cpu/CpuBackend.h"
#endif
#ifdef GRAPHC_HAS_CUDA
#include "codegen/cuda/CudaBackend.h"
#endif

namespace graphc::codegen {

namespace {

const std::vector<const Backend*>& registered() {
  static const std::vector<const Backend*> backends = {
      &referenceBackend(),
#ifdef GRAPHC_HAS_CPU
      &cpu::backend(),
#endif
#ifdef GRAPHC_HAS_CUDA
      &cuda::backend(),
#endif
  };
  return backends;
}

const Backend* find(Device d) {
  for (const Backend* b : registered())
    if (b->device() == d) return b;
  return nullptr;
}

}  // namespace

bool hasBackend(Device d) { return find(d) != nullptr; }

const Backend& backendFor(Device d) {
  if (const Backend* b = find(d)) return *b;
  throw ir::Error(fmt::format("this graphc was built without the {} backend ({} at build time)", deviceName(d),
                              d == Device::Cpu ? "no LLVM 19" : "no CUDA Toolkit"));
}

const Backend* backendForEmit(std::string_view kind) {
  for (const Backend* b : registered())
    for (std::string_view k : b->emitKinds())
      if (k == kind) return b;
  return nullptr;
}

}  // namespace graphc::codegen
