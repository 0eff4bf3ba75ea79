#include "deploy/Writer.h"

#include "codegen/StepPlan.h"
#include "codegen/cpu/CpuExecutable.h"
#include "deploy/GraphJson.h"
#include "deploy/Package.h"
#include "deploy/PlanJson.h"
#include "deploy/Weights.h"
#include "ir/Printer.h"

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

}  // namespace

void writeCpuPackage(const ir::Graph& fused, const codegen::Backend::ExportedCode& code,
                     const std::filesystem::path& out, json manifest) {
  WeightsWriter weights;
  const json graph = graphToJson(fused, weights.callback());
  ir::AttributeTextOptions text;
  text.denseReference = [&](const ir::DenseElements& d) { return weights.nameOf(d); };
  const std::string graphText =
      "// The optimised graph of this package; dense constants are in weights.safetensors,\n"
      "// named as graph.json names them. What the runtime reads is graph.json.\n" +
      ir::print(fused, text);

  const codegen::LoweredKernels lowered = codegen::lowerKernels(fused, codegen::cpu::cpuLowerOptions());
  const json plan = {{"plan", planToJson(*codegen::planGraph(fused, lowered.kernels, lowered.position))},
                     {"kernels", kernelTable(lowered)}};

  manifest["device"] = "cpu";
  manifest["target"] = code.target;
  manifest["inputs"] = typesJson(fused.body.paramTypes(), &fused.body);
  manifest["outputs"] = typesJson(fused.resultTypes, nullptr);
  std::vector<PackageEntry> entries = {{"graph.graph", graphText},
                                       {"graph.json", graph.dump()},
                                       {"plan.json", plan.dump()},
                                       {"weights.safetensors", weights.file()}};
  for (const auto& [name, bytes] : code.files) entries.push_back({name, bytes});
  writePackage(out, std::move(manifest), entries);
}

}  // namespace graphc::deploy
