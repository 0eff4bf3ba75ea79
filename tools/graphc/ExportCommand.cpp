// graphc export: a model compiled ahead of time into one package file
// (docs/export.md) that `graphc run` and the compiler-free runtime
// (libgraphc-runtime.so) load without compiling.
#include <cstdio>

#include "tools/graphc/Commands.h"

namespace graphc::tools {

int exportCommand(const ExportCommandOptions& options) {
  if (options.output.empty()) {
    std::fputs("graphc: error: export needs -o OUT.gcpkg\n", stderr);
    return 2;
  }
  return withErrorsReported([&] {
    const graphc::LoadedModel loaded = graphc::loadModel(options.file, {});
    graphc::exportPackage(loaded.graph, options.output, options.compile, options.exportOptions);
    return 0;
  });
}

}  // namespace graphc::tools
