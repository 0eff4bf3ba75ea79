// graphc import: an ONNX model as .graph text, which every other
// subcommand (and the reference interpreter) reads like a hand-written
// graph.
#include <cstdio>

#include <fmt/format.h>

#include "ir/Printer.h"
#include "tools/graphc/Commands.h"

namespace graphc::tools {

int importCommand(const ImportOptions& options) {
  if (!isOnnxFile(options.file)) {
    std::fprintf(stderr, "graphc: error: %s: import reads ONNX models (.onnx)\n", options.file.c_str());
    return 2;
  }
  ir::DiagnosticEngine diags(ir::printToStderr());
  try {
    std::map<std::string, runtime::Tensor> known;
    for (const std::string& item : options.inputs) {
      size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "graphc: error: --input expects NAME=PATH, got '%s'\n", item.c_str());
        return 2;
      }
      known[item.substr(0, eq)] = readTensorFile(item.substr(eq + 1));
    }
    LoadedModule loaded = loadModule(options.file, diags, known);
    if (!loaded.module) return 1;
    for (const std::string& name : loaded.specialised)
      std::fprintf(stderr, "graphc: note: input '%s' is specialised on its --input value\n", name.c_str());
    return writeOutput(options.output, ir::print(*loaded.module)) ? 0 : 1;
  } catch (const ir::Error& e) {
    std::fprintf(stderr, "graphc: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace graphc::tools
