#include "deploy/Writer.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "codegen/StepPlan.h"
#include "codegen/cpu/CpuExecutable.h"
#include "deploy/GraphJson.h"
#include "deploy/Package.h"
#include "deploy/PlanJson.h"
#include "deploy/Weights.h"
#include "ir/Diagnostics.h"
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

struct MxUse {
  bool fits = false;        // only GEMMs read it, as their weight
  bool transposed = false;  // as a matmul's B [k, n]
};

/// The f32 constants of `plan`'s graph and whether only GEMMs read them, as
/// their weight, all in one orientation (cond branches' steps included).
void gemmWeights(const codegen::RegionPlan& plan, std::map<const ir::DenseElements*, MxUse>& onlyGemm) {
  for (const codegen::StepPlan& s : plan.steps) {
    for (const auto& branch : s.branches)
      if (branch) gemmWeights(*branch, onlyGemm);
    if (!s.node) continue;
    const int weight = codegen::cpu::mxWeightOperand(s);
    for (size_t k = 0; k < s.node->operands.size(); ++k) {
      const ir::Node* def = s.node->operands[k]->definingNode();
      const ir::Attribute* value = def && def->op == ir::OpId::Constant ? def->attrs.find("value") : nullptr;
      if (!value || value->kind != ir::Attribute::Kind::Dense) continue;
      const ir::DenseElements* d = value->dense.get();
      // A matmul's B is blocked along its rows (k): stored transposed.
      const codegen::kernel::Gemm* g = s.kernelIR && s.kernelIR->gemm ? &*s.kernelIR->gemm : nullptr;
      const bool transposed = g && !g->conv && !g->transposeB;
      const bool fits = static_cast<int>(k) == weight && d->dtype == ir::DType::F32 && d->shape.size() >= 2 &&
                        (!transposed || d->shape.size() == 2);
      auto [it, added] = onlyGemm.emplace(d, MxUse{fits, transposed});
      if (!added) it->second.fits = it->second.fits && fits && it->second.transposed == transposed;
    }
  }
}

/// Marks the constants a region of `r` returns (the plan copies those out,
/// which an MX weight cannot be) as read by something other than a GEMM.
void returnedConstants(const ir::Region& r, std::map<const ir::DenseElements*, MxUse>& onlyGemm) {
  for (const ir::Value* v : r.returns) {
    const ir::Node* def = v->definingNode();
    const ir::Attribute* value = def && def->op == ir::OpId::Constant ? def->attrs.find("value") : nullptr;
    if (value && value->kind == ir::Attribute::Kind::Dense) onlyGemm[value->dense.get()].fits = false;
  }
  for (const auto& n : r.nodes())
    for (const auto& sub : n->regions()) returnedConstants(*sub, onlyGemm);
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

void writeCpuPackage(const ir::Graph& fused, const codegen::Backend::ExportedCode& code,
                     const std::filesystem::path& out, json manifest, const std::string& weightFormat) {
  const codegen::LoweredKernels lowered = codegen::lowerKernels(fused, codegen::cpu::cpuLowerOptions());
  const std::unique_ptr<codegen::RegionPlan> stepPlan = codegen::planGraph(fused, lowered.kernels, lowered.position);

  WeightsWriter weights;
  int64_t quantized = 0;
  if (const std::optional<ir::MxFormat> format = weightStorage(weightFormat)) {
    std::map<const ir::DenseElements*, MxUse> onlyGemm;
    gemmWeights(*stepPlan, onlyGemm);
    returnedConstants(fused.body, onlyGemm);
    std::map<const ir::DenseElements*, bool> chosen;  // and whether transposed
    for (const auto& [d, use] : onlyGemm)
      if (use.fits) {
        chosen.emplace(d, use.transposed);
        quantized += d->numel();
      }
    weights.quantize(std::move(chosen), *format);
    manifest["weights"] = {{"format", ir::mxFormatInfo(*format).name}, {"quantized_values", quantized}};
  } else {
    manifest["weights"] = {{"format", "f32"}};
  }
  const json graph = graphToJson(fused, weights.callback());
  ir::AttributeTextOptions text;
  text.denseReference = [&](const ir::DenseElements& d) { return weights.nameOf(d); };
  const std::string graphText =
      "// The optimised graph of this package; dense constants are in weights.safetensors,\n"
      "// named as graph.json names them. What the runtime reads is graph.json.\n" +
      ir::print(fused, text);

  const json plan = {{"plan", planToJson(*stepPlan)}, {"kernels", kernelTable(lowered)}};

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
