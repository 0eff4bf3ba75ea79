// graphc export: a model compiled ahead of time into one package file
// (docs/export.md) that `graphc run` and the compiler-free runtime
// (libgraphc-runtime.so) load without compiling.
#include <cstdio>
#include <map>

#include "tools/graphc/Commands.h"

namespace graphc::tools {

int exportCommand(const ExportCommandOptions& options) {
  if (options.output.empty()) {
    std::fputs("graphc: error: export needs -o OUT.gcpkg\n", stderr);
    return 2;
  }
  return withErrorsReported([&] {
    std::map<std::string, int64_t> pinned;  // SYM=? keeps SYM symbolic, as not naming it does
    for (const std::string& item : options.dims) {
      const auto [name, value] = splitAssignment(item, "--dim");
      if (value != "?") pinned[name] = parseInt(value, "--dim " + name);
    }
    const graphc::LoadedModel loaded = graphc::loadModel(options.file, {});
    const graphc::Graph graph = pinned.empty() ? loaded.graph : loaded.graph.withStaticDims(pinned);
    graphc::exportPackage(graph, options.output, options.compile, options.exportOptions);
    return 0;
  });
}

}  // namespace graphc::tools
