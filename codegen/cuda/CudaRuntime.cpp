#include "codegen/cuda/CudaRuntime.h"

#include <dlfcn.h>

#include <mutex>
#include <optional>

#include <cusolver_common.h>

#include "codegen/cuda/CudaCheck.h"

namespace graphc::codegen::cuda {

namespace {

struct Probe {
  std::optional<DeviceInfo> info;
  std::string reason;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe out;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cudaGetLastError();  // clear the sticky error
      out.reason = cudaGetErrorString(status);
      // Without a driver at all the runtime says the driver is too old; say which.
      if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD); driver)
        dlclose(driver);
      else if (void* d = dlopen("libcuda.so.1", RTLD_LAZY); d)
        dlclose(d);
      else
        out.reason = "no NVIDIA driver (libcuda.so.1 cannot be loaded): " + out.reason;
      return out;
    }
    if (count == 0) {
      out.reason = "the CUDA runtime sees no devices";
      return out;
    }
    cudaDeviceProp prop{};
    if (const cudaError_t s = cudaGetDeviceProperties(&prop, 0); s != cudaSuccess) {
      out.reason = cudaGetErrorString(s);
      return out;
    }
    if (prop.major < 8) {
      out.reason = fmt::format("device 0 ({}) is sm_{}{}; graphc's kernels need sm_80 or newer", prop.name, prop.major,
                               prop.minor);
      return out;
    }
    DeviceInfo d;
    d.name = prop.name;
    d.major = prop.major;
    d.minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.memoryBytes = prop.totalGlobalMem;
    cudaRuntimeGetVersion(&d.runtimeVersion);
    cudaDriverGetVersion(&d.driverVersion);
    out.info = d;
    return out;
  }();
  return p;
}

}  // namespace

std::string DeviceInfo::arch() const { return fmt::format("sm_{}{}", major, minor); }

const DeviceInfo& device() {
  const Probe& p = probe();
  if (!p.info) throw ir::Error("no CUDA device: " + p.reason);
  return *p.info;
}

std::string noDeviceReason() {
  const Probe& p = probe();
  return p.info ? std::string() : p.reason;
}

int cusolverVersion() {
  int major = 0, minor = 0, patch = 0;
  cusolverGetProperty(MAJOR_VERSION, &major);
  cusolverGetProperty(MINOR_VERSION, &minor);
  cusolverGetProperty(PATCH_LEVEL, &patch);
  return major * 1000 + minor * 100 + patch;
}

}  // namespace graphc::codegen::cuda
