#include "runtime/ModuleFolders.h"

#include <dlfcn.h>

#include <cstdlib>

namespace graphc::runtime {

namespace fs = std::filesystem;

std::vector<fs::path> moduleFolders() {
  if (const char* dir = std::getenv("GRAPHC_BACKEND_DIR"); dir && *dir) return {fs::path(dir)};
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<const void*>(&moduleFolders), &info) || !info.dli_fname) return {};
  std::error_code ec;
  fs::path self = fs::canonical(fs::path(info.dli_fname), ec);
  if (ec) self = fs::path(info.dli_fname);
  const fs::path here = self.parent_path();
  std::vector<fs::path> folders{here / "graphc", here.parent_path() / "lib" / "graphc"};
  if (fs::path(GRAPHC_INSTALL_LIBDIR) != "lib")
    folders.push_back(here.parent_path() / GRAPHC_INSTALL_LIBDIR / "graphc");
  return folders;
}

}  // namespace graphc::runtime
