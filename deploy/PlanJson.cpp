#include "deploy/PlanJson.h"

#include "codegen/cpu/CompiledKernel.h"
#include "codegen/kernel/KernelIR.h"
#include "deploy/Package.h"

namespace graphc::deploy {

namespace {

using nlohmann::json;

const char* whereName(codegen::SlotPlan::Where w) {
  switch (w) {
    case codegen::SlotPlan::Where::Param: return "param";
    case codegen::SlotPlan::Where::Output: return "output";
    case codegen::SlotPlan::Where::Arena: return "arena";
    case codegen::SlotPlan::Where::Owned: return "owned";
    case codegen::SlotPlan::Where::Constant: return "constant";
  }
  return "?";
}

const char* kindName(codegen::StepPlan::Kind k) {
  switch (k) {
    case codegen::StepPlan::Kind::Kernel: return "kernel";
    case codegen::StepPlan::Kind::Gemm: return "gemm";
    case codegen::StepPlan::Kind::Eigh: return "eigh";
    case codegen::StepPlan::Kind::Cond: return "cond";
    case codegen::StepPlan::Kind::Host: return "host";
    case codegen::StepPlan::Kind::Copy: return "copy";
    case codegen::StepPlan::Kind::Attention: return "attention";
  }
  return "?";
}

}  // namespace

json planToJson(const codegen::RegionPlan& plan) {
  json slots = json::array();
  for (const codegen::SlotPlan& s : plan.slots) {
    json slot = {{"where", whereName(s.where)}, {"type", ir::toString(s.type)}};
    if (s.where == codegen::SlotPlan::Where::Param || s.where == codegen::SlotPlan::Where::Output)
      slot["index"] = s.index;
    if (s.where == codegen::SlotPlan::Where::Arena) slot["offset"] = s.offset.str();
    slots.push_back(std::move(slot));
  }
  json steps = json::array();
  for (const codegen::StepPlan& s : plan.steps) {
    json step = {{"kind", kindName(s.kind)}, {"inputs", s.inputs}, {"outputs", s.outputs}};
    if (s.kernel >= 0) step["kernel"] = s.kernel;
    if (s.node) step["op"] = s.node->name();
    if (s.kind == codegen::StepPlan::Kind::Eigh) step["uplo"] = std::string(1, s.uplo);
    if (s.kind == codegen::StepPlan::Kind::Cond)
      step["branches"] = json::array({planToJson(*s.branches[0]), planToJson(*s.branches[1])});
    steps.push_back(std::move(step));
  }
  return {{"slots", std::move(slots)}, {"steps", std::move(steps)}, {"arena_bytes", plan.arenaSize.str()}};
}

json kernelTable(const codegen::LoweredKernels& lowered) {
  json table = json::array();
  for (size_t i = 0; i < lowered.kernels.size(); ++i) {
    const std::string ir = codegen::kernel::print(*lowered.kernels[i]);
    table.push_back({{"symbol", codegen::cpu::exportedKernelSymbol(i)},
                     {"name", lowered.kernels[i]->name},
                     {"ir_xxh3_64", checksumOf(std::as_bytes(std::span(ir.data(), ir.size())))}});
  }
  return table;
}

}  // namespace graphc::deploy
