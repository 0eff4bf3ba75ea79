// libFuzzer target for the .graph front end. For any bytes it checks that
// parsing never crashes, hangs or trips a sanitizer (errors are fine, but
// must be reported), and then what FuzzChecks.h checks of what parsed.
#include <cstdint>
#include <string>

#include "FuzzChecks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphc;
  ir::DiagnosticEngine diags;
  auto m = frontend::parseString(std::string(reinterpret_cast<const char*>(data), size), diags, "fuzz.graph");
  if (!m) {
    if (!diags.hadError()) fuzz::die("parse failed without a diagnostic", "");
    return 0;
  }
  fuzz::checkModule(*m);
  return 0;
}
