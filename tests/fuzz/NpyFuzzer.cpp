// libFuzzer target for the .npy reader (inputs given with `--input
// x=FILE.npy`). For any bytes: no crash, hang, sanitizer report or
// allocation beyond what the bytes hold; a file that parses holds exactly
// its shape's data and writes back to a file that parses to the same.
#include <cstdint>
#include <cstring>
#include <string>

#include "FuzzChecks.h"
#include "runtime/Npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphc;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  runtime::Tensor t;
  try {
    t = runtime::parseNpy(bytes, "fuzz.npy");
  } catch (const ir::Error& e) {
    if (std::string(e.what()).rfind("fuzz.npy: ", 0) != 0) fuzz::die("an error without the file's name", e.what());
    return 0;
  }
  if (t.nbytes() > size) fuzz::die("more data than the file holds", bytes);
  const runtime::Tensor again = runtime::parseNpy(runtime::serializeNpy(t), "again.npy");
  if (again.type() != t.type() || std::memcmp(again.data(), t.data(), t.nbytes()) != 0)
    fuzz::die("write then read changed the tensor", bytes);
  return 0;
}
