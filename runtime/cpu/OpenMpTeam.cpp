#include "runtime/cpu/OpenMpTeam.h"

#include <dlfcn.h>
#include <link.h>

#include <string_view>
#include <vector>

#include "runtime/cpu/ThreadPool.h"

namespace graphc::runtime {

namespace {

/// The paths of the loaded objects whose file name names an OpenMP runtime.
std::vector<std::string> loadedOpenMpRuntimes() {
  std::vector<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string_view path = info->dlpi_name ? info->dlpi_name : "";
        const std::string_view file = path.substr(path.find_last_of('/') + 1);  // npos + 1 == 0: no folder
        if (file.starts_with("libgomp") || file.starts_with("libomp") || file.starts_with("libiomp"))
          static_cast<std::vector<std::string>*>(out)->emplace_back(path);
        return 0;
      },
      &found);
  return found;
}

}  // namespace

std::string runOnLoadedOpenMpTeam() {
  for (const std::string& path : loadedOpenMpRuntimes()) {
    // RTLD_NOLOAD: a handle to the copy already mapped, or nothing.
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    void* symbol = dlsym(handle, "GOMP_parallel");
    // The handle stays open: the team's launcher must outlive the pool.
    if (!symbol) {
      dlclose(handle);
      continue;
    }
    ThreadPool::global().runOnTeam(reinterpret_cast<ThreadPool::TeamLauncher>(symbol));
    return path;
  }
  return "";
}

}  // namespace graphc::runtime
