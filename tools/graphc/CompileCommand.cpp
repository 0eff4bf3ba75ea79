// graphc compile: a graph through the pipeline, then what --emit asks of
// it (graphc::emit, the driver run/bench's compile() goes through too).
#include <cstdio>

#include "tools/graphc/Commands.h"

namespace graphc::tools {

int compileCommand(const CompileCommandOptions& options) {
  // --emit=llvm asks the cpu backend whatever --device says; saying
  // another device is a contradiction.
  if (const codegen::Backend* own = codegen::backendForEmit(options.emit);
      own && options.deviceGiven && own->device() != options.compile.device) {
    std::fprintf(stderr, "graphc: error: --emit=%s is what the %s backend generates; use --device %s\n",
                 options.emit.c_str(), std::string(own->name()).c_str(), std::string(own->name()).c_str());
    return 2;
  }
  return withErrorsReported([&] {
    const Graph graph = graphc::loadModel(options.file).graph;
    graphc::CompileReport report;
    const std::string out = graphc::emit(graph, options.emit, options.compile, &report);
    if (options.timePasses) std::fputs(report.table().c_str(), stderr);
    if (!report.dumpDir.empty()) std::fprintf(stderr, "graphc: debug dump in %s\n", report.dumpDir.c_str());
    return writeOutput(options.output, out) ? 0 : 1;
  });
}

}  // namespace graphc::tools
