// graphc export: a model compiled ahead of time into one package file
// (docs/export.md) that `graphc run` and the compiler-free runtime
// (libgraphc-runtime.so) load without compiling.
#include <charconv>
#include <cstdio>
#include <map>

#include "tools/graphc/Commands.h"

namespace graphc::tools {

int exportCommand(const ExportCommandOptions& options) {
  if (options.output.empty()) {
    std::fputs("graphc: error: export needs -o OUT.gcpkg\n", stderr);
    return 2;
  }
  std::map<std::string, int64_t> pinned;
  for (const std::string& item : options.dims) {
    const size_t eq = item.find('=');
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int64_t size = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), size);
    if (eq == std::string::npos || eq == 0 ||
        (value != "?" && (error != std::errc() || end != value.data() + value.size() || size < 0))) {
      std::fprintf(stderr, "graphc: error: --dim expects SYM=N or SYM=? (kept symbolic), got '%s'\n", item.c_str());
      return 2;
    }
    if (value != "?") pinned[item.substr(0, eq)] = size;
  }
  return withErrorsReported([&] {
    const graphc::LoadedModel loaded = graphc::loadModel(options.file, {});
    const graphc::Graph graph = pinned.empty() ? loaded.graph : loaded.graph.withStaticDims(pinned);
    graphc::exportPackage(graph, options.output, options.compile, options.exportOptions);
    return 0;
  });
}

}  // namespace graphc::tools
