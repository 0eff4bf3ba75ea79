#include "codegen/BufferAssignment.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "codegen/ConcatViews.h"
#include "ir/Diagnostics.h"
#include "ir/KernelKind.h"
#include "ir/Printer.h"
#include "ir/SizeMath.h"

namespace graphc::codegen {

using ir::Dim;
using ir::Error;
using ir::SymbolBindings;
using ir::TensorType;

namespace {
std::string bindingsText(const SymbolBindings& sizes) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : sizes) parts.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string product(int64_t coefficient, const std::vector<std::string>& symbols) {
  if (symbols.empty()) return std::to_string(coefficient);
  std::string key = fmt::format("{}", fmt::join(symbols, "*"));
  return coefficient == 1 ? key : fmt::format("{}*{}", coefficient, key);
}
}  // namespace

Bytes Bytes::of(const TensorType& t) {
  Bytes b{ir::dtypeSize(t.dtype), {}};
  for (const Dim& d : t.shape) {
    if (!d.isStatic()) {
      for (const std::string& f : d.factors()) b.symbols.push_back(f);
    }
    if (std::optional<int64_t> n = ir::mulSizes(b.coefficient, d.size)) {
      b.coefficient = *n;
    } else {
      throw Error(fmt::format("type {} is too large: its byte count overflows int64", ir::toString(t)));
    }
  }
  std::sort(b.symbols.begin(), b.symbols.end());
  if (b.coefficient == 0) b.symbols.clear();
  return b;
}

bool Bytes::fitsIn(const Bytes& capacity) const {
  if (coefficient == 0) return true;
  return symbols == capacity.symbols && coefficient <= capacity.coefficient;
}

int64_t Bytes::evaluate(const SymbolBindings& sizes) const {
  int64_t n = coefficient;
  for (const std::string& s : symbols) {
    std::optional<int64_t> value = ir::factorValue(s, sizes);
    if (!value) throw Error(fmt::format("the size {} has no value for {}", s, bindingsText(sizes)));
    std::optional<int64_t> next = ir::mulSizes(n, *value);
    if (!next) throw Error(fmt::format("the buffer of {} bytes overflows int64 for {}", str(), bindingsText(sizes)));
    n = *next;
  }
  return n;
}

std::string Bytes::str() const { return product(coefficient, symbols); }

ArenaOffset ArenaOffset::operator+(const Bytes& size) const {
  ArenaOffset sum = *this;
  sum.pieces.push_back(size);
  return sum;
}

int64_t ArenaOffset::evaluate(const SymbolBindings& sizes) const {
  int64_t total = 0;
  for (const Bytes& piece : pieces) {
    std::optional<int64_t> aligned = ir::alignUp(piece.evaluate(sizes), kArenaAlignment);
    std::optional<int64_t> next = aligned ? ir::addSizes(total, *aligned) : std::nullopt;
    if (!next) throw Error(fmt::format("the arena size overflows int64 for {}", bindingsText(sizes)));
    total = *next;
  }
  return total;
}

std::string ArenaOffset::str() const {
  // Pieces whose rounding is known (static sizes, and symbolic ones whose
  // coefficient is a multiple of the alignment) add up as a polynomial.
  std::map<std::vector<std::string>, int64_t> polynomial;
  std::vector<std::string> rounded;
  for (const Bytes& p : pieces) {
    if (p.coefficient == 0) continue;
    if (p.symbols.empty())
      polynomial[{}] += *ir::alignUp(p.coefficient, kArenaAlignment);
    else if (p.coefficient % kArenaAlignment == 0)
      polynomial[p.symbols] += p.coefficient;
    else
      rounded.push_back(fmt::format("align{}({})", kArenaAlignment, p.str()));
  }
  std::vector<std::string> terms;
  for (auto it = polynomial.rbegin(); it != polynomial.rend(); ++it)  // symbolic terms first, the constant last
    if (!it->first.empty()) terms.push_back(product(it->second, it->first));
  terms.insert(terms.end(), rounded.begin(), rounded.end());
  if (auto c = polynomial.find({}); c != polynomial.end()) terms.push_back(std::to_string(c->second));
  return terms.empty() ? "0" : fmt::format("{}", fmt::join(terms, " + "));
}

bool scattersInPlace(const ir::Node& n, const ir::Value* data) {
  return n.op == ir::OpId::ScatterNd && n.operands[0] == data && n.operands[1] != data && n.operands[2] != data;
}

bool isElementwiseKernel(const ir::Node& n) {
  if (n.op != ir::OpId::Fused || ir::parseKernelKind(n.attrs.find("kind")->s) != ir::KernelKind::Pointwise)
    return false;
  for (const auto& m : n.regions()[0]->nodes())
    if (!m->info().isPointwise() && m->op != ir::OpId::Constant) return false;
  return true;
}

namespace {

/// How each input update of `g` is done (BufferAssignment::Update).
std::vector<BufferAssignment::Update> planInputUpdates(const ir::Graph& g) {
  using How = BufferAssignment::Update::How;
  const ir::Region& body = g.body;
  std::unordered_map<const ir::Node*, size_t> position;
  for (size_t i = 0; i < body.nodes().size(); ++i) position[body.nodes()[i].get()] = i;
  std::vector<BufferAssignment::Update> out;
  std::unordered_set<const ir::Value*> direct;
  for (const ir::InputUpdate& u : g.inputUpdates) {
    BufferAssignment::Update up{u.result, u.param, body.returns.at(u.result), How::Copy};
    const ir::Node* def = up.value->definingNode();
    bool returnedElsewhere = false;  // the input's own value is read at the end
    for (size_t k = 0; k < body.returns.size(); ++k)
      if (body.returns[k] == u.param && k != u.result) returnedElsewhere = true;
    if (up.value == u.param) {
      up.how = How::Unchanged;
    } else if (def && def->op != ir::OpId::Constant && def->op != ir::OpId::Full && !direct.count(up.value) &&
               !returnedElsewhere) {
      const size_t at = position.at(def);
      bool readLater = false;
      for (size_t i = at; i < body.nodes().size() && !readLater; ++i) {
        const ir::Node& n = *body.nodes()[i];
        const bool reads = std::find(n.operands.begin(), n.operands.end(), u.param) != n.operands.end();
        readLater = reads && (i > at || !(isElementwiseKernel(n) || scattersInPlace(n, u.param)));
      }
      if (!readLater) {
        up.how = How::Direct;
        direct.insert(up.value);
      }
    }
    out.push_back(up);
  }
  return out;
}

struct Slot {
  ArenaOffset offset;
  Bytes capacity;
};

}  // namespace

const ir::Value* BufferAssignment::writtenInto(const ir::Value* v) const {
  for (const Update& u : updates)
    if (u.value == v && u.how == Update::How::Direct) return u.param;
  return nullptr;
}

const BufferAssignment::Buffer* BufferAssignment::find(const ir::Value* v) const {
  for (const Buffer& b : buffers)
    if (b.value == v) return &b;
  return nullptr;
}

BufferAssignment assignBuffers(const ir::Graph& g) {
  const ir::Region& body = g.body;
  std::unordered_map<const ir::Value*, int> lastUse;
  for (size_t i = 0; i < body.nodes().size(); ++i)
    for (const ir::Value* v : body.nodes()[i]->operands) lastUse[v] = static_cast<int>(i);
  std::unordered_map<const ir::Value*, bool> returned;
  for (const ir::Value* v : body.returns) returned[v] = true;

  // A concatenation group's slot is live from its first member's definition
  // to the last use of any member.
  const ConcatViews views = findConcatViews(body);
  std::vector<int> groupLastStep(views.groups.size(), -1);
  for (size_t i = 0; i < body.nodes().size(); ++i)
    for (const auto& result : body.nodes()[i]->results())
      if (auto it = views.memberOf.find(result.get()); it != views.memberOf.end()) {
        const int last = lastUse.count(result.get()) ? lastUse.at(result.get()) : static_cast<int>(i);
        groupLastStep[it->second.first] = std::max(groupLastStep[it->second.first], last);
      }
  std::vector<std::optional<Slot>> groupSlot(views.groups.size());

  BufferAssignment out;
  out.graph = &g;
  out.concatViews = views.nodes;
  std::unordered_map<const ir::Value*, Slot> placed;
  std::vector<Slot> freeSlots;
  ArenaOffset arenaEnd;
  // The first freed slot big enough, else a new one at the arena's end.
  auto takeSlot = [&](const Bytes& size) {
    for (size_t s = 0; s < freeSlots.size(); ++s)
      if (size.fitsIn(freeSlots[s].capacity)) {
        Slot slot = freeSlots[s];
        freeSlots.erase(freeSlots.begin() + static_cast<std::ptrdiff_t>(s));
        return slot;
      }
    Slot slot{arenaEnd, size};
    arenaEnd = arenaEnd + size;
    return slot;
  };
  for (size_t i = 0; i < body.nodes().size(); ++i) {
    const ir::Node& n = *body.nodes()[i];
    const int step = static_cast<int>(i);
    std::vector<const ir::Value*> tookOver;
    if (n.op != ir::OpId::Constant && n.op != ir::OpId::Full) {
      for (const auto& result : n.results()) {
        const ir::Value* v = result.get();
        if (returned.count(v)) continue;
        BufferAssignment::Buffer a{v, {}, Bytes::of(v->type), step, lastUse.count(v) ? lastUse.at(v) : step, nullptr};
        if (auto member = views.memberOf.find(v); member != views.memberOf.end()) {
          const auto [group, index] = member->second;
          const ConcatViews::Member& m = views.groups[group].members[index];
          if (!groupSlot[group]) groupSlot[group] = takeSlot(Bytes{views.groups[group].bytes, {}});
          a.offset = m.offset == 0 ? groupSlot[group]->offset : groupSlot[group]->offset + Bytes{m.offset, {}};
          a.concatView = m.view;
          a.concatInto = m.into;
          out.buffers.push_back(a);
          continue;
        }
        std::optional<Slot> slot;
        if (isElementwiseKernel(n))
          for (const ir::Value* in : n.operands)
            if (placed.count(in) && lastUse.at(in) == step && in->type == v->type &&
                std::find(tookOver.begin(), tookOver.end(), in) == tookOver.end()) {
              slot = placed.at(in);
              tookOver.push_back(in);
              a.reusedFrom = in;
              break;
            }
        if (!slot) slot = takeSlot(a.size);
        a.offset = slot->offset;
        placed[v] = *slot;
        out.buffers.push_back(a);
      }
    }
    // Buffers whose last use was this node go back to the free list.
    for (const ir::Value* in : n.operands)
      if (placed.count(in) && lastUse.at(in) == step &&
          std::find(tookOver.begin(), tookOver.end(), in) == tookOver.end()) {
        freeSlots.push_back(placed.at(in));
        placed.erase(in);
      }
    for (size_t group = 0; group < groupSlot.size(); ++group)
      if (groupSlot[group] && groupLastStep[group] == step) freeSlots.push_back(*groupSlot[group]);
  }
  out.arenaSize = arenaEnd;
  out.updates = planInputUpdates(g);
  return out;
}

std::string describe(const BufferAssignment& a) {
  const auto names = ir::valueNames(a.graph->body);
  std::string out = fmt::format("// memory plan: arena of {} bytes, {} intermediate buffer{}\n", a.arenaSize.str(),
                                a.buffers.size(), a.buffers.size() == 1 ? "" : "s");
  for (const BufferAssignment::Buffer& b : a.buffers)
    out += fmt::format("//   {:<10} offset {:<12} size {:<12} live {}..{}{}\n", names.at(b.value), b.offset.str(),
                       b.size.str(), b.firstStep, b.lastStep,
                       b.reusedFrom   ? " (in place of " + names.at(b.reusedFrom) + ")"
                       : b.concatView ? " (concatenated in place)"
                       : b.concatInto ? " (into " + names.at(b.concatInto) + ")"
                                      : "");
  for (const BufferAssignment::Update& u : a.updates) {
    using How = BufferAssignment::Update::How;
    out += fmt::format("//   result {} updates {} in place: {}\n", u.result, names.at(u.param),
                       u.how == How::Unchanged ? "unchanged"
                       : u.how == How::Direct  ? names.at(u.value) + " is computed into it"
                                               : names.at(u.value) + " is copied into it after its last read");
  }
  return out;
}

}  // namespace graphc::codegen
