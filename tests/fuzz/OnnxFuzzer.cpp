// libFuzzer target for the ONNX importer: protobuf bytes in. For any bytes
// the import must not crash, hang, throw or trip a sanitizer — a model it
// cannot use is a diagnostic — and what it imports must pass what
// FuzzChecks.h checks of a parsed .graph file (round trip, pipeline,
// lowering, a run on the reference interpreter).
#include <cstdint>
#include <new>
#include <string>

#include "FuzzChecks.h"
#include "frontend/onnx/OnnxImporter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphc;
  ir::DiagnosticEngine diags;
  frontend::OnnxImport imported;
  try {
    imported = frontend::importOnnx(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx", diags);
  } catch (const std::bad_alloc&) {
    return 0;  // a model that declares more than memory holds
  }
  if (!imported.module) {
    if (!diags.hadError()) fuzz::die("import failed without a diagnostic", "");
    return 0;
  }
  fuzz::checkModule(*imported.module);
  return 0;
}
