// libgraphc-runtime-cuda.so: a cuda package's Executable (deploy/CudaPackages.h).
// The package's module must be, byte for byte, the one this runtime emits
// for the kernels of its graph (as a cpu package's kernel table must match);
// then the cubin for device 0 is chosen — the one of its major version
// with the highest minor not above the device's, since a cubin runs on
// later minors of its major (sm_80 on sm_86) — else the PTX, which the
// driver compiles for the device.
#include <cstdlib>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "codegen/BackendPlugin.h"
#include "codegen/cuda/CudaExecutable.h"
#include "codegen/cuda/CudaRuntime.h"
#include "deploy/CudaPackages.h"
#include "ir/Diagnostics.h"

namespace graphc::deploy {

namespace {

using codegen::cuda::DeviceInfo;

std::string_view text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// sm_86 → {8, 6}, sm_120 → {12, 0}; nullopt for a name that is not one.
std::optional<std::pair<int, int>> capabilityOf(std::string_view entry) {
  constexpr std::string_view prefix = "cuda/sm_", suffix = ".cubin";
  if (!entry.starts_with(prefix) || !entry.ends_with(suffix)) return std::nullopt;
  const std::string_view digits = entry.substr(prefix.size(), entry.size() - prefix.size() - suffix.size());
  if (digits.size() < 2 || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  const int number = std::atoi(std::string(digits).c_str());
  return std::pair{number / 10, number % 10};
}

std::unique_ptr<runtime::Executable> load(const ir::Graph& g, const codegen::LoweredKernels& lowered,
                                          const CudaPackageCode& code) {
  codegen::cuda::CudaModule source = codegen::cuda::emitLowered(g, lowered);
  const auto stored = code.files.find(codegen::cuda::kExportedSource);
  if (stored == code.files.end() || text(stored->second) != source.source)
    throw ir::Error(
        fmt::format("{}: {} is not the module this runtime makes of its graph (export it again with this "
                    "version)",
                    code.name, codegen::cuda::kExportedSource));

  const DeviceInfo& dev = [&]() -> const DeviceInfo& {
    try {
      return codegen::cuda::device();
    } catch (const ir::Error& e) {
      throw ir::Error(fmt::format("{}: {}", code.name, e.what()));
    }
  }();
  std::string chosen;
  int chosenMinor = -1;
  for (const auto& [entry, bytes] : code.files)
    if (const auto cc = capabilityOf(entry);
        cc && cc->first == dev.major && cc->second <= dev.minor && cc->second > chosenMinor) {
      chosen = entry;
      chosenMinor = cc->second;
    }
  if (chosen.empty()) chosen = codegen::cuda::kExportedPtx;
  const auto image = code.files.find(chosen);
  if (image == code.files.end())
    throw ir::Error(fmt::format("{}: no cubin for {} ({}) and no PTX", code.name, dev.arch(), dev.name));
  const auto matmul = code.target.find("matmul");
  const codegen::MatmulImpl impl = matmul != code.target.end() && matmul->second == "cublaslt"
                                       ? codegen::MatmulImpl::CublasLt
                                       : codegen::MatmulImpl::Generated;
  try {
    return codegen::cuda::makeExecutable(g, lowered, std::move(source), text(image->second), impl);
  } catch (const ir::Error& e) {
    throw ir::Error(fmt::format("{}: {}: {}", code.name, chosen, e.what()));
  }
}

}  // namespace

}  // namespace graphc::deploy

extern "C" __attribute__((visibility("default"))) graphc::deploy::CudaRuntimePlugin graphc_runtime_cuda_plugin() {
  return {graphc::codegen::kBackendPluginAbi, &graphc::deploy::load};
}
