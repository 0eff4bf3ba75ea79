// memory-plan: assigns every intermediate buffer of a graph's top level (a
// result that is neither a graph input, an output nor a constant) an offset
// in one arena, from the liveness of values over the node order:
//
//  - a buffer is live from the node that defines it to its last use;
//  - a pointwise kernel whose body is purely elementwise (no shape ops)
//    writes its result in place of an input of the same type that dies
//    there;
//  - otherwise the first freed slot big enough is reused, else the arena
//    grows.
//
// Sizes may be symbolic; "big enough" then must hold for every value of the
// symbols. Every buffer starts aligned for any dtype: each size is rounded
// up to 64 bytes (a cache line) when the sizes are bound
// (ir::ArenaOffset). The plan goes into Graph::memoryPlan (shown by
// `graphc compile --emit=graph`); the IR itself does not change.
#include <unordered_map>

#include "ir/Printer.h"
#include "passes/Passes.h"

namespace graphc::passes {

namespace {

/// Elementwise: output element i reads input element i only.
bool isElementwiseKernel(const ir::Node& n) {
  if (n.op != ir::OpId::Fused || n.attrs.find("kind")->s != "pointwise") return false;
  for (const auto& m : n.regions()[0]->nodes())
    if (!m->info().isPointwise() && m->op != ir::OpId::Constant) return false;
  return true;
}

struct Slot {
  ir::ArenaOffset offset;
  ir::Bytes capacity;
};

}  // namespace

PassResult MemoryPlanPass::run(ir::Graph& g, ir::DiagnosticEngine&) {
  const ir::Region& body = g.body;
  const auto names = ir::valueNames(body);
  std::unordered_map<const ir::Value*, int> lastUse;
  for (size_t i = 0; i < body.nodes().size(); ++i)
    for (const ir::Value* v : body.nodes()[i]->operands) lastUse[v] = static_cast<int>(i);
  std::unordered_map<const ir::Value*, bool> returned;
  for (const ir::Value* v : body.returns) returned[v] = true;

  ir::MemoryPlan plan;
  std::unordered_map<const ir::Value*, Slot> placed;
  std::vector<Slot> freeSlots;
  ir::ArenaOffset arenaEnd;
  for (size_t i = 0; i < body.nodes().size(); ++i) {
    const ir::Node& n = *body.nodes()[i];
    const int step = static_cast<int>(i);
    std::vector<const ir::Value*> tookOver;
    if (n.op != ir::OpId::Constant && n.op != ir::OpId::Full) {
      for (const auto& result : n.results()) {
        const ir::Value* v = result.get();
        if (returned.count(v)) continue;
        ir::BufferAssignment a{names.at(v), {}, ir::Bytes::of(v->type), step, lastUse.count(v) ? lastUse.at(v) : step, {}};
        std::optional<Slot> slot;
        if (isElementwiseKernel(n))
          for (const ir::Value* in : n.operands)
            if (placed.count(in) && lastUse.at(in) == step && in->type == v->type &&
                std::find(tookOver.begin(), tookOver.end(), in) == tookOver.end()) {
              slot = placed.at(in);
              tookOver.push_back(in);
              a.reusedFrom = names.at(in);
              break;
            }
        for (size_t s = 0; !slot && s < freeSlots.size(); ++s)
          if (a.size.fitsIn(freeSlots[s].capacity)) {
            slot = freeSlots[s];
            freeSlots.erase(freeSlots.begin() + static_cast<std::ptrdiff_t>(s));
          }
        if (!slot) {
          slot = Slot{arenaEnd, a.size};
          arenaEnd = arenaEnd + a.size;
        }
        a.offset = slot->offset;
        placed[v] = *slot;
        plan.buffers.push_back(a);
      }
    }
    // Buffers whose last use was this node go back to the free list.
    for (const ir::Value* in : n.operands)
      if (placed.count(in) && lastUse.at(in) == step &&
          std::find(tookOver.begin(), tookOver.end(), in) == tookOver.end()) {
        freeSlots.push_back(placed.at(in));
        placed.erase(in);
      }
  }
  plan.peak = arenaEnd;
  g.memoryPlan = std::move(plan);
  return {false, false};
}

}  // namespace graphc::passes
