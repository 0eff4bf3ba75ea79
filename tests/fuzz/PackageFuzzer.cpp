// libFuzzer target for the compiler-free runtime's loader (deploy/): for
// any bytes, no crash, hang, sanitizer report or leak — an ir::Error that
// names the package, or a package that loads. The first byte picks what the
// rest is, so that mutations reach past the container's checksums:
//
//   0  a whole package (.gcpkg): Package::fromBytes + the loader
//   1  u32 n, then n bytes of weights.safetensors, then graph.json: the
//      graph read over those weights, verified, lowered and planned — what
//      the loader does before it opens the kernels
//   2  a safetensors file: parsed; what parses writes back and parses to
//      the same tensors
//
// tests/fuzz/run-fuzzer.sh package makes the seeds from exported examples.
#include <cstdint>
#include <cstring>
#include <string>

#include "codegen/StepPlan.h"
#include "codegen/cpu/CpuExecutable.h"
#include "deploy/GraphJson.h"
#include "deploy/Loader.h"
#include "deploy/PlanJson.h"
#include "deploy/Weights.h"
#include "ir/Diagnostics.h"
#include "runtime/Safetensors.h"

namespace {

using namespace graphc;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

void wholePackage(std::span<const std::byte> bytes) {
  try {
    deploy::LoadedPackage p = deploy::loadPackage(bytes, "fuzz.gcpkg");
    p.executable.reset();
  } catch (const ir::Error& e) {
    if (std::string(e.what()).rfind("fuzz.gcpkg: ", 0) != 0) die("an error without the package's name");
  }
}

void graphOverWeights(std::span<const std::byte> bytes) {
  if (bytes.size() < 4) return;
  uint32_t n = 0;
  std::memcpy(&n, bytes.data(), 4);
  bytes = bytes.subspan(4);
  if (n > bytes.size()) return;
  try {
    const runtime::SafetensorsFile weights = runtime::parseSafetensors(bytes.first(n));
    const auto* text = reinterpret_cast<const char*>(bytes.data() + n);
    const nlohmann::json j =
        nlohmann::json::parse(text, text + (bytes.size() - n), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return;
    std::unique_ptr<ir::Module> m = deploy::graphFromJson(j, deploy::weightsReader(weights, nullptr));
    const codegen::LoweredKernels lowered = codegen::lowerKernels(*m->entry(), codegen::cpu::cpuLowerOptions());
    deploy::planToJson(*codegen::planGraph(*m->entry(), lowered.kernels, lowered.position));
    deploy::kernelTable(lowered);
  } catch (const ir::Error&) {
  }
}

void safetensors(std::span<const std::byte> bytes) {
  runtime::SafetensorsFile f;
  try {
    f = runtime::parseSafetensors(bytes);
  } catch (const ir::Error&) {
    return;
  }
  const std::string again = runtime::writeSafetensors(f.tensors, f.metadata);
  const runtime::SafetensorsFile g = runtime::parseSafetensors(std::as_bytes(std::span(again.data(), again.size())));
  if (g.tensors.size() != f.tensors.size() || g.metadata != f.metadata) die("write then read changed the file");
  for (const runtime::SafetensorsTensor& t : f.tensors) {
    const runtime::SafetensorsTensor* u = g.find(t.name);
    if (!u || u->dtype != t.dtype || u->shape != t.shape || u->bytes.size() != t.bytes.size() ||
        std::memcmp(u->bytes.data(), t.bytes.data(), t.bytes.size()) != 0)
      die("write then read changed a tensor");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: wholePackage(rest); break;
    case 1: graphOverWeights(rest); break;
    case 2: safetensors(rest); break;
  }
  return 0;
}
