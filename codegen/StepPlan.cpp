#include "codegen/StepPlan.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/MxOperands.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/Lowering.h"
#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"
#include "ir/SizeMath.h"
#include "runtime/reference/Interpreter.h"

namespace graphc::codegen {

namespace {

class Planner {
 public:
  Planner(const std::vector<std::shared_ptr<const codegen::kernel::Kernel>>& kernels,
          const std::unordered_map<const ir::Node*, int>& kernelOf)
      : kernels_(kernels), kernelOf_(kernelOf) {}

  std::unique_ptr<RegionPlan> plan(const ir::Region& r, const BufferAssignment* buffers) {
    auto out = std::make_unique<RegionPlan>();
    if (buffers) out->arenaSize = buffers->arenaSize;
    std::unordered_map<const ir::Value*, int> slotOf;
    auto newSlot = [&](SlotPlan s) {
      out->slots.push_back(std::move(s));
      return static_cast<int>(out->slots.size()) - 1;
    };
    for (size_t k = 0; k < r.params().size(); ++k)
      slotOf[r.param(k)] = newSlot(SlotPlan{SlotPlan::Where::Param, r.param(k)->type, static_cast<int>(k), {}, {}});
    // A result that updates an input in place is the input's buffer: its
    // value is computed into it or copied in at the end.
    std::vector<bool> updates(r.returns.size(), false);
    if (buffers)
      for (const BufferAssignment::Update& u : buffers->updates) updates[u.result] = true;
    // A returned value computed here is written straight into its output;
    // a parameter, a constant or a value returned twice is copied there.
    std::unordered_map<const ir::Value*, int> directOutput;
    for (size_t k = 0; k < r.returns.size(); ++k) {
      const ir::Value* v = r.returns[k];
      const ir::Node* def = v->definingNode();
      const bool computed = def && def->op != ir::OpId::Constant && def->op != ir::OpId::Full;
      if (computed && !updates[k] && !directOutput.count(v) && !(buffers && buffers->writtenInto(v)))
        directOutput[v] = static_cast<int>(k);
    }
    for (const auto& n : r.nodes()) {
      for (const auto& result : n->results()) {
        const ir::Value* v = result.get();
        if (const ir::Value* param = buffers ? buffers->writtenInto(v) : nullptr) {
          slotOf[v] = slotOf.at(param);
          continue;
        }
        SlotPlan s;
        s.type = v->type;
        if (auto it = directOutput.find(v); it != directOutput.end()) {
          s.where = SlotPlan::Where::Output;
          s.index = it->second;
        } else if (const BufferAssignment::Buffer* b = buffers ? buffers->find(v) : nullptr) {
          s.where = SlotPlan::Where::Arena;
          s.offset = b->offset;
        }
        slotOf[v] = newSlot(std::move(s));
      }
      if (buffers && buffers->concatViews.count(n.get())) continue;  // its operands wrote its bytes
      StepPlan step = planNode(*n, slotOf);
      if (step.kind == StepPlan::Kind::Host && (n->op == ir::OpId::Constant || n->op == ir::OpId::Full) &&
          n->result()->type.isStatic()) {
        // Constants are computed once, here (a returned one is copied out below).
        SlotPlan& s = out->slots[static_cast<size_t>(slotOf[n->result()])];
        s.where = SlotPlan::Where::Constant;
        s.constantNode = n.get();
        const ir::Attribute* value = n->attrs.find("value");
        if (value && value->kind == ir::Attribute::Kind::Dense && value->dense->mx) {
          s.mx = value->dense->mx;
        } else if (value && value->kind == ir::Attribute::Kind::Dense && value->dense->dtype == s.type.dtype &&
                   static_cast<int64_t>(value->dense->nbytes) ==
                       runtime::checkedBytes(s.type.dtype, runtime::concreteShape(s.type))) {
          // The weights themselves, not a copy (a model's whole size at
          // every compile): steps only read constant slots, and the
          // executable keeps the graph, whose attribute owns the bytes.
          const ir::DenseElements& dense = *value->dense;
          s.constant =
              runtime::Tensor::wrap(s.type.dtype, runtime::concreteShape(s.type), const_cast<std::byte*>(dense.data),
                                    std::const_pointer_cast<void>(dense.owner));
        } else {
          s.constant = runtime::evaluateNode(*n, {}, {runtime::concreteShape(n->result()->type)})[0];
        }
        continue;
      }
      out->steps.push_back(std::move(step));
    }
    auto copy = [&](int from, int to) {
      StepPlan step;
      step.kind = StepPlan::Kind::Copy;
      step.inputs = {from};
      step.outputs = {to};
      out->steps.push_back(std::move(step));
    };
    for (size_t k = 0; k < r.returns.size(); ++k) {
      const ir::Value* v = r.returns[k];
      auto it = directOutput.find(v);
      if (updates[k] || (it != directOutput.end() && it->second == static_cast<int>(k))) continue;
      copy(slotOf.at(v), newSlot(SlotPlan{SlotPlan::Where::Output, v->type, static_cast<int>(k), {}, {}}));
    }
    if (buffers) planUpdateCopies(*buffers, slotOf, *out, newSlot, copy);
    return out;
  }

 private:
  /// The updates copied in at the end, after the outputs' copies. A source
  /// that is itself an input updated here (two inputs swapped) is first
  /// copied aside, so every update reads the inputs as they came in.
  template <typename NewSlot, typename Copy>
  static void planUpdateCopies(const BufferAssignment& buffers, std::unordered_map<const ir::Value*, int>& slotOf,
                               RegionPlan& out, NewSlot& newSlot, Copy& copy) {
    using How = BufferAssignment::Update::How;
    std::unordered_map<const ir::Value*, int> source;
    for (const BufferAssignment::Update& u : buffers.updates) {
      if (u.how != How::Copy) continue;
      source[u.value] = slotOf.at(u.value);
      const bool overwritten = std::any_of(buffers.updates.begin(), buffers.updates.end(), [&](const auto& other) {
        return other.param == u.value && other.how == How::Copy;
      });
      if (overwritten && out.slots[static_cast<size_t>(source[u.value])].where == SlotPlan::Where::Param) {
        const int aside = newSlot(SlotPlan{SlotPlan::Where::Owned, u.value->type, 0, {}, {}});
        copy(source[u.value], aside);
        source[u.value] = aside;
      }
    }
    for (const BufferAssignment::Update& u : buffers.updates)
      if (u.how == How::Copy) copy(source.at(u.value), slotOf.at(u.param));
  }

  StepPlan planNode(const ir::Node& n, std::unordered_map<const ir::Value*, int>& slotOf) {
    StepPlan step;
    step.node = &n;
    for (const ir::Value* v : n.operands) step.inputs.push_back(slotOf.at(v));
    for (const auto& v : n.results()) step.outputs.push_back(slotOf.at(v.get()));
    if (n.op == ir::OpId::Fused) {
      step.kernel = kernelOf_.at(&n);
      step.kernelIR = kernels_.at(static_cast<size_t>(step.kernel));
      step.kind = step.kernelIR->attention ? StepPlan::Kind::Attention
                  : step.kernelIR->gemm    ? StepPlan::Kind::Gemm
                                           : StepPlan::Kind::Kernel;
    } else if (n.op == ir::OpId::Eigh) {
      step.kind = StepPlan::Kind::Eigh;
      const ir::Attribute* uplo = n.attrs.find("uplo");
      step.uplo = uplo && uplo->s == "U" ? 'U' : 'L';
    } else if (n.op == ir::OpId::Cond) {
      step.kind = StepPlan::Kind::Cond;
      for (int b = 0; b < 2; ++b) step.branches[b] = plan(*n.regions()[static_cast<size_t>(b)], nullptr);
    } else {
      step.kind = StepPlan::Kind::Host;  // an op no kernel holds: the reference implementation
    }
    return step;
  }

  const std::vector<std::shared_ptr<const codegen::kernel::Kernel>>& kernels_;
  const std::unordered_map<const ir::Node*, int>& kernelOf_;
};

}  // namespace

std::unique_ptr<RegionPlan> planGraph(const ir::Graph& g,
                                      const std::vector<std::shared_ptr<const kernel::Kernel>>& kernels,
                                      const std::unordered_map<const ir::Node*, int>& kernelOf) {
  const BufferAssignment buffers = assignBuffers(g);
  return Planner(kernels, kernelOf).plan(g.body, &buffers);
}

namespace {
void markKernelsRun(const RegionPlan& plan, std::vector<bool>& run) {
  for (const StepPlan& s : plan.steps) {
    if (s.kernel >= 0) run.at(static_cast<size_t>(s.kernel)) = true;
    for (const auto& branch : s.branches)
      if (branch) markKernelsRun(*branch, run);
  }
}
}  // namespace

std::vector<bool> kernelsRun(const RegionPlan& plan, size_t kernelCount) {
  std::vector<bool> run(kernelCount, false);
  markKernelsRun(plan, run);
  return run;
}

LoweredKernels lowerKernels(const ir::Graph& g, const kernel::LowerOptions& options) {
  LoweredKernels out;
  out.fused = codegen::kernel::fusedOps(g.body);
  for (size_t i = 0; i < out.fused.size(); ++i) {
    const ir::Node* f = out.fused[i];
    try {
      auto k = std::make_shared<codegen::kernel::Kernel>(codegen::kernel::lower(*f, options));
      // A weight an exported package holds in an MX format: the kernel reads its bytes.
      for (size_t in = 0; in < k->inputs.size() && in < f->operands.size(); ++in) k->inputs[in].mx = mxLayoutOf(*f, in);
      out.kernels.push_back(std::move(k));
    } catch (const ir::Error& e) {
      throw ir::LocatedError(f->loc, e.what());
    }
    out.position[f] = static_cast<int>(i);
  }
  return out;
}

void checkKernelSizes(const StepPlan& step, const ir::SymbolBindings& sizes) {
  if (!step.kernelIR) return;
  const codegen::kernel::Kernel& k = *step.kernelIR;
  auto extent = [&](const std::vector<ir::Dim>& dims) {
    return ir::checkedExtent(dims, sizes, "a kernel's iteration space");
  };
  for (const codegen::kernel::Kernel::MinimumSize& m : k.minimumSizes)
    if (const int64_t n = extent({m.size}); n < m.atLeast) throw ir::Error(ir::rules::sliceStartError(-m.atLeast, n));
  if (k.attention) {  // the softmax's amax over the keys
    if (extent({k.outer.back()}) != 0) return;
    if (extent(std::vector<ir::Dim>(k.outer.begin(), k.outer.end() - 1)) != 0)
      throw ir::Error("amax of an empty tensor has no identity");
    return;
  }
  if (k.reduceSizes.empty()) return;
  if (extent(k.reduceSizes) != 0 || extent(k.outer) == 0) return;
  if (std::optional<ir::OpId> op = codegen::kernel::storedExtremum(k))
    throw ir::Error(fmt::format("{} of an empty tensor has no identity", ir::opInfo(*op).name));
}

}  // namespace graphc::codegen
