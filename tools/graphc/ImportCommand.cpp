// graphc import: an ONNX model as .graph text, which every other
// subcommand (and the reference interpreter) reads like a hand-written
// graph.
#include <cstdio>
#include <map>

#include "tools/graphc/Commands.h"

namespace graphc::tools {

int importCommand(const ImportCommandOptions& options) {
  if (options.file.size() < 5 || options.file.substr(options.file.size() - 5) != ".onnx") {
    std::fprintf(stderr, "graphc: error: %s: import reads ONNX models (.onnx)\n", options.file.c_str());
    return 2;
  }
  return withErrorsReported([&] {
    std::map<std::string, runtime::Tensor> known;
    for (const std::string& item : options.inputs) {
      size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "graphc: error: --input expects NAME=PATH, got '%s'\n", item.c_str());
        return 2;
      }
      known[item.substr(0, eq)] = graphc::readTensor(item.substr(eq + 1));
    }
    const graphc::LoadedModel loaded = graphc::loadModel(options.file, known);
    for (const std::string& name : loaded.specialised)
      std::fprintf(stderr, "graphc: note: input '%s' is specialised on its --input value\n", name.c_str());
    return writeOutput(options.output, loaded.graph.text()) ? 0 : 1;
  });
}

}  // namespace graphc::tools
