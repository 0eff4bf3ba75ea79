#include "deploy/Writer.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "codegen/MxOperands.h"
#include "codegen/StepPlan.h"
#include "deploy/GraphJson.h"
#include "deploy/Package.h"
#include "deploy/PlanJson.h"
#include "deploy/Weights.h"
#include "ir/Diagnostics.h"
#include "ir/Printer.h"
#include "runtime/Safetensors.h"

namespace graphc::deploy {

namespace {

using nlohmann::json;

json typesJson(const std::vector<ir::TensorType>& types, const ir::Region* names) {
  json out = json::array();
  for (size_t i = 0; i < types.size(); ++i) {
    json t = {{"type", ir::toString(types[i])}};
    if (names) t["name"] = names->param(i)->name;
    out.push_back(std::move(t));
  }
  return out;
}

/// The fewest values an embedding table (a constant only gathered) must
/// hold to be stored in an MX format: 2^16, 256 KiB in f32.
constexpr int64_t kMinGatheredMxValues = int64_t{1} << 16;

/// The f32 constants of `plan` that may be stored in an MX format — every
/// slot holding one allows it (codegen::constantUses over the backend's
/// readers, Backend::readsMxInput; a gathered table only from
/// kMinGatheredMxValues values) — and whether each is a matmul's B, stored
/// transposed.
std::map<const ir::DenseElements*, bool> mxWeights(const codegen::RegionPlan& plan, const codegen::Backend& backend) {
  std::map<const ir::DenseElements*, bool> chosen;
  std::set<const ir::DenseElements*> refused;
  const codegen::MxReader reads = [&](const codegen::kernel::Kernel& k, int input) {
    return backend.readsMxInput(k, input);
  };
  for (const auto& [slot, use] : codegen::constantUses(plan, reads)) {
    const ir::Attribute* value = slot->constantNode ? slot->constantNode->attrs.find("value") : nullptr;
    if (!value || value->kind != ir::Attribute::Kind::Dense) continue;
    const ir::DenseElements* d = value->dense.get();
    auto [it, added] = chosen.emplace(d, use.transposed);
    if (!use.mxAllowed() || d->dtype != ir::DType::F32 || it->second != use.transposed) refused.insert(d);
    // A gathered table's rounding reaches the activations element by element
    // (a GEMM's averages out over its dot products): only a large table pays.
    if (use.gathered && d->numel() < kMinGatheredMxValues) refused.insert(d);
  }
  for (const ir::DenseElements* d : refused) chosen.erase(d);
  return chosen;
}

}  // namespace

std::optional<ir::MxFormat> weightStorage(const std::string& name) {
  if (name == "f32") return std::nullopt;
  if (std::optional<ir::MxFormat> format = ir::parseMxFormat(name)) return format;
  throw ir::Error(
      fmt::format("export: unknown weight format '{}' (f32, f16, bf16, mxfp8, mxfp6, mxfp4, or an MX "
                  "element format: mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4_e2m1)",
                  name));
}

void writeGraphPackage(const ir::Graph& fused, const codegen::Backend& backend, const codegen::CompileOptions& options,
                       codegen::CompileReport& report, const std::filesystem::path& out, json manifest,
                       const std::string& weightFormat) {
  const std::optional<ir::MxFormat> storage = weightStorage(weightFormat);
  const codegen::LoweredKernels lowered = codegen::lowerKernels(fused, backend.lowerOptions());
  const std::unique_ptr<codegen::RegionPlan> stepPlan = codegen::planGraph(fused, lowered.kernels, lowered.position);

  WeightsWriter weights;
  int64_t quantized = 0;
  if (const std::optional<ir::MxFormat> format = storage) {
    std::map<const ir::DenseElements*, bool> chosen = mxWeights(*stepPlan, backend);
    for (const auto& [d, transposed] : chosen) quantized += d->numel();
    weights.quantize(std::move(chosen), *format);
    manifest["weights"] = {{"format", ir::mxFormatInfo(*format).name}, {"quantized_values", quantized}};
  } else {
    manifest["weights"] = {{"format", "f32"}};
  }
  const json graph = graphToJson(fused, weights.callback());
  const std::string weightsFile = weights.file();
  ir::AttributeTextOptions text;
  text.denseReference = [&](const ir::DenseElements& d) { return weights.nameOf(d); };
  const std::string graphText =
      "// The optimised graph of this package; dense constants are in weights.safetensors,\n"
      "// named as graph.json names them. What the runtime reads is graph.json.\n" +
      ir::print(fused, text);

  // The kernels, the kernel table and the plan are made of the graph as the
  // runtime will read it back — MX weights and all: a kernel that reads one
  // (the cuda GEMM, a cpu gather) dequantises it itself, and its kernel IR
  // says so (codegen/MxOperands.h).
  const auto storageBytes = storage ? std::make_shared<const std::string>(weightsFile) : nullptr;
  const std::unique_ptr<ir::Module> readBack =
      storage ? graphFromJson(
                    json::parse(graph.dump()),  // from the text, as the runtime reads it
                    weightsReader(runtime::parseSafetensors(std::as_bytes(std::span(*storageBytes))), storageBytes))
              : nullptr;
  const ir::Graph& compiled = readBack ? *readBack->entry() : fused;
  const codegen::LoweredKernels compiledKernels =
      readBack ? codegen::lowerKernels(compiled, backend.lowerOptions()) : lowered;
  const codegen::Backend::ExportedCode code = backend.exportCode(compiled, options, report);
  const json plan = {
      {"plan", planToJson(*codegen::planGraph(compiled, compiledKernels.kernels, compiledKernels.position))},
      {"kernels", kernelTable(compiledKernels)}};

  manifest["device"] = std::string(codegen::deviceName(backend.device()));
  manifest["target"] = code.target;
  manifest["inputs"] = typesJson(fused.body.paramTypes(), &fused.body);
  manifest["outputs"] = typesJson(fused.resultTypes, nullptr);
  std::vector<PackageEntry> entries = {{"graph.graph", graphText},
                                       {"graph.json", graph.dump()},
                                       {"plan.json", plan.dump()},
                                       {"weights.safetensors", weightsFile}};
  for (const auto& [name, bytes] : code.files) entries.push_back({name, bytes});
  writePackage(out, std::move(manifest), entries);
}

}  // namespace graphc::deploy
