#include "deploy/CudaPackages.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/BackendPlugin.h"
#include "ir/Diagnostics.h"
#include "runtime/ModuleFolders.h"

namespace graphc::deploy {

namespace {

CudaPackageLoader openModule() {
  std::vector<std::string> looked;
  for (const std::filesystem::path& folder : runtime::moduleFolders()) {
    const std::filesystem::path path = folder / kCudaRuntimeModule;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      looked.push_back(folder.string());
      continue;
    }
    // Never closed: its Executables live as long as the process may use them.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      throw ir::Error(fmt::format("the cuda runtime module ({}) cannot be loaded: {}", path.string(),
                                  why ? why : "unknown dlopen error"));
    }
    using Entry = CudaRuntimePlugin (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, kCudaRuntimeEntry));
    const CudaRuntimePlugin plugin = entry ? entry() : CudaRuntimePlugin{};
    if (!plugin.abi || std::string_view(plugin.abi) != codegen::kBackendPluginAbi || !plugin.load)
      throw ir::Error(fmt::format("{} was built for another graphc ({}; this one is {})", path.string(),
                                  plugin.abi ? plugin.abi : "?", codegen::kBackendPluginAbi));
    return plugin.load;
  }
  throw ir::Error(
      fmt::format("the cuda runtime module {} is missing (looked in {}; set GRAPHC_BACKEND_DIR to its folder)",
                  kCudaRuntimeModule, fmt::join(looked, ", ")));
}

}  // namespace

CudaPackageLoader cudaPackageLoader() {
  // A failure is reported on every ask, as the backend registry does.
  static std::mutex mutex;
  static CudaPackageLoader loader = nullptr;
  std::lock_guard lock(mutex);
  if (!loader) loader = openModule();
  return loader;
}

}  // namespace graphc::deploy
