// The backend registry: the one place that knows where backends come from.
// The reference device is always here. The cpu backend (LLVM) and the cuda
// backend (NVRTC, cuBLASLt, cuSOLVER) are shared modules, loaded with
// dlopen the first time their device is asked for, as onnxruntime loads
// its execution providers: a process that never compiles for a device
// never maps its libraries (`graphc --help` stays small; the CUDA
// libraries alone are some 250 MB of resident memory once loaded).
//
//   where   runtime::moduleFolders() ($GRAPHC_BACKEND_DIR, else lib/graphc/
//           beside libgraphc.so or bin/graphc); the file is
//           libgraphc-<device>.so.
//   entry   the module's graphc_backend_plugin(), which returns the ABI
//           string it was built with (kBackendPluginAbi, checked) and its
//           Backend.
//   builtin test and tool programs link a backend in whole and register it
//           before main (BuiltinBackend); it is then used as is.
//
// GRAPHC_HAS_CPU / GRAPHC_HAS_CUDA say which modules this build made, so a
// device this build lacks is named as such rather than as a missing file.
#include <dlfcn.h>

#include <array>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "codegen/Backend.h"
#include "codegen/BackendPlugin.h"
#include "codegen/ReferenceBackend.h"
#include "ir/Diagnostics.h"
#include "runtime/ModuleFolders.h"

namespace graphc::codegen {

namespace fs = std::filesystem;

namespace {

struct Registry {
  std::mutex mutex;
  std::array<const Backend*, 3> backends{};
  std::array<std::string, 3> loadError;  // why a module did not load (reported on each ask)
  std::array<bool, 3> tried{};
};

Registry& registry() {
  static Registry r;
  return r;
}

size_t slot(Device d) { return static_cast<size_t>(d); }

bool builtWith(Device d) {
  switch (d) {
    case Device::Reference: return true;
#ifdef GRAPHC_HAS_CPU
    case Device::Cpu: return true;
#endif
#ifdef GRAPHC_HAS_CUDA
    case Device::Cuda: return true;
#endif
    default: return false;
  }
}

/// Loads the device's module; its Backend, or null with `error` set.
const Backend* loadModule(Device d, std::string& error) {
  const std::string file = fmt::format("libgraphc-{}.so", deviceName(d));
  std::vector<std::string> looked;
  for (const fs::path& folder : runtime::moduleFolders()) {
    const fs::path path = folder / file;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      looked.push_back(folder.string());
      continue;
    }
    // RTLD_LOCAL: the module's copies of graphc's code stay its own. Never
    // closed: its Executables and their code live as long as the process.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      error = fmt::format("the {} backend ({}) cannot be loaded: {}", deviceName(d), path.string(),
                          why ? why : "unknown dlopen error");
      return nullptr;
    }
    auto entry = reinterpret_cast<BackendPluginEntry>(::dlsym(handle, kBackendPluginEntry));
    if (!entry) {
      error = fmt::format("{} is not a graphc backend module (no {})", path.string(), kBackendPluginEntry);
      return nullptr;
    }
    const BackendPlugin plugin = entry();
    if (!plugin.abi || std::string_view(plugin.abi) != kBackendPluginAbi || !plugin.backend ||
        plugin.backend->device() != d) {
      error = fmt::format("{} was built for another graphc ({}; this one is {})", path.string(),
                          plugin.abi ? plugin.abi : "?", kBackendPluginAbi);
      return nullptr;
    }
    return plugin.backend;
  }
  error = fmt::format("the {} backend module {} is missing (looked in {}; set GRAPHC_BACKEND_DIR to its folder)",
                      deviceName(d), file, fmt::join(looked, ", "));
  return nullptr;
}

const Backend* find(Device d) {
  if (d == Device::Reference) return &referenceBackend();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (!r.backends[slot(d)] && !r.tried[slot(d)] && builtWith(d)) {
    r.tried[slot(d)] = true;
    r.backends[slot(d)] = loadModule(d, r.loadError[slot(d)]);
  }
  return r.backends[slot(d)];
}

}  // namespace

BuiltinBackend::BuiltinBackend(const Backend& b) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.backends[slot(b.device())] = &b;
}

bool hasBackend(Device d) { return find(d) != nullptr; }

const Backend& backendFor(Device d) {
  if (const Backend* b = find(d)) return *b;
  if (!builtWith(d))
    throw ir::Error(fmt::format("this graphc was built without the {} backend ({} at build time)", deviceName(d),
                                d == Device::Cpu ? "no LLVM 19" : "no CUDA Toolkit"));
  std::lock_guard lock(registry().mutex);
  throw ir::Error(registry().loadError[slot(d)]);
}

const Backend* backendForEmit(std::string_view kind) {
  for (Device d : {Device::Reference, Device::Cpu, Device::Cuda})
    if (const Backend* b = find(d))
      for (std::string_view k : b->emitKinds())
        if (k == kind) return b;
  return nullptr;
}

}  // namespace graphc::codegen
