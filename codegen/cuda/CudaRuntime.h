// The CUDA runtime as graphc uses it: which device there is, and errors as
// ir::Error. A machine without a GPU or driver loads graphc normally; the
// first thing that needs a device throws "no CUDA device: <reason>".
#pragma once

#include <string>

namespace graphc::codegen::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  size_t memoryBytes = 0;
  int runtimeVersion = 0, driverVersion = 0;  // 13000 for 13.0

  /// "sm_90": the architecture NVRTC compiles for.
  std::string arch() const;
};

/// Device 0; throws ir::Error("no CUDA device: ...") when there is none
/// (no GPU, no driver, a driver too old for this runtime, or a device older
/// than sm_80, which the generated kernels need).
const DeviceInfo& device();

/// Empty when device() would succeed, else the reason it would not (for
/// tests that skip without a device, and their printed reason).
std::string noDeviceReason();

/// cuSOLVER's version as CUSOLVER_VERSION spells it (11701 for 11.7.1).
int cusolverVersion();

}  // namespace graphc::codegen::cuda
