#include "codegen/MxOperands.h"

#include <cstring>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "ir/Printer.h"

namespace graphc::codegen {

int64_t mxScalesOffset(const MxLayout& m) { return (m.rows * ir::mxRowBytes(m.format, m.cols) + 16) / 16 * 16; }

int64_t mxBufferBytes(const MxLayout& m) {
  return mxScalesOffset(m) + (ir::mxHasScales(m.format) ? m.rows * ir::mxRowBlocks(m.cols) : 0);
}

std::vector<std::byte> mxBuffer(const ir::MxWeights& w) {
  const MxLayout layout{w.format, w.rows, w.cols, w.transposed};
  std::vector<std::byte> bytes(static_cast<size_t>(mxBufferBytes(layout)));
  std::memcpy(bytes.data(), w.elements.data(), w.elements.size());
  if (!w.scales.empty()) std::memcpy(bytes.data() + mxScalesOffset(layout), w.scales.data(), w.scales.size());
  return bytes;
}

std::optional<MxLayout> mxLayoutOf(const ir::Node& f, size_t i) {
  const ir::Node* def = f.operands[i]->definingNode();
  const ir::Attribute* value = def && def->op == ir::OpId::Constant ? def->attrs.find("value") : nullptr;
  if (!value || value->kind != ir::Attribute::Kind::Dense || !value->dense->mx) return std::nullopt;
  const ir::MxWeights& w = *value->dense->mx;
  return MxLayout{w.format, w.rows, w.cols, w.transposed};
}

namespace {

void collectConstantUses(const RegionPlan& plan, const MxReader& reads,
                         std::unordered_map<const SlotPlan*, ConstantUse>& uses) {
  for (const SlotPlan& slot : plan.slots)
    if (slot.where == SlotPlan::Where::Constant) uses.emplace(&slot, ConstantUse{});
  for (const StepPlan& s : plan.steps) {
    for (const auto& branch : s.branches)
      if (branch) collectConstantUses(*branch, reads, uses);
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      auto it = uses.find(&plan.slots[static_cast<size_t>(s.inputs[k])]);
      if (it == uses.end()) continue;
      ConstantUse& use = it->second;
      const int input = static_cast<int>(k);
      const bool fits = s.kernelIR && reads(*s.kernelIR, input);
      const kernel::Gemm* g = s.kernelIR && s.kernelIR->gemm ? &*s.kernelIR->gemm : nullptr;
      const bool transposed = g && !g->conv && !g->transposeB && input == g->b;  // a matmul's B [k, n]
      if (!fits || (use.read && use.transposed != transposed)) use.onlyMxReaders = false;
      use.read = true;
      use.transposed = transposed;
      use.gathered = use.gathered || (fits && !g);
    }
  }
}

}  // namespace

std::unordered_map<const SlotPlan*, ConstantUse> constantUses(const RegionPlan& plan, const MxReader& reads) {
  std::unordered_map<const SlotPlan*, ConstantUse> uses;
  collectConstantUses(plan, reads, uses);
  return uses;
}

void checkMxUses(const RegionPlan& plan, const MxReader& reads) {
  for (const auto& [slot, use] : constantUses(plan, reads)) {
    if (!slot->mx) continue;
    // A linear's weight [n, k], filters [m, k...] and a table [rows, d] are
    // stored as they are, a matmul's B [k, n] transposed (blocks run along k).
    const ir::TensorType& t = slot->type;
    const ir::MxWeights& mx = *slot->mx;
    const bool shaped = t.isStatic() && t.shape[0].size == (mx.transposed ? mx.cols : mx.rows) &&
                        t.staticNumElements() == mx.rows * mx.cols;
    if (!use.mxAllowed() || use.transposed != mx.transposed || !shaped)
      throw ir::Error(fmt::format("an MX weight ({}) is read by a step that cannot read it", ir::toString(t)));
  }
}

}  // namespace graphc::codegen
