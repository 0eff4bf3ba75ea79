#include "codegen/ConcatViews.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "codegen/BufferAssignment.h"
#include "ir/ShapeRules.h"

namespace graphc::codegen {

bool isConcatCopy(const ir::Node& n) {
  if (n.op == ir::OpId::Concat) return true;
  if (n.op != ir::OpId::Fused || n.regions().size() != 1) return false;
  const ir::Region& body = *n.regions()[0];
  if (body.nodes().size() != 1 || body.returns.size() != 1) return false;
  const ir::Node& c = *body.nodes()[0];
  if (c.op != ir::OpId::Concat || body.returns[0] != c.result() || c.operands.size() != body.params().size())
    return false;
  for (size_t k = 0; k < c.operands.size(); ++k)
    if (c.operands[k] != body.param(k)) return false;
  return true;
}

namespace {

/// The byte count of a static type.
int64_t bytesOf(const ir::TensorType& t) { return ir::dtypeSize(t.dtype) * *t.staticNumElements(); }

/// Whether a concatenation's result is laid out as its operands one after
/// the other: static, and no dim before the concatenated one above 1.
bool slicesAreContiguous(const ir::Node& n) {
  const ir::TensorType& t = n.result()->type;
  if (!t.isStatic()) return false;
  const ir::Attribute* dim =
      n.op == ir::OpId::Concat ? n.attrs.find("dim") : n.regions()[0]->nodes()[0]->attrs.find("dim");
  const std::optional<int64_t> axis = dim ? ir::rules::normalizeAxis(dim->i, t.rank()) : std::nullopt;
  if (!axis) return false;
  for (int64_t d = 0; d < *axis; ++d)
    if (t.shape[static_cast<size_t>(d)].size != 1) return false;
  return true;
}

class Finder {
 public:
  explicit Finder(const ir::Region& body) {
    for (const ir::Value* v : body.returns) returned_.insert(v);
  }

  void visit(const ir::Node& n) {
    if (!isConcatCopy(n) || !slicesAreContiguous(n) || !isArenaValue(n.result())) return;
    // Each operand's offset from the concatenation's start.
    std::vector<int64_t> at;
    int64_t end = 0;
    for (const ir::Value* v : n.operands) {
      if (!isArenaValue(v) || end % kArenaAlignment != 0) return;
      if (std::count(n.operands.begin(), n.operands.end(), v) != 1) return;
      at.push_back(end);
      end += bytesOf(v->type);
    }
    // The group the operands already placed belong to, with the offset the
    // concatenation must start at; other groups they belong to merge in.
    std::optional<size_t> target;
    int64_t base = 0;
    std::vector<ConcatViews::Member> members;
    std::vector<size_t> merged;
    for (size_t k = 0; k < n.operands.size(); ++k) {
      auto it = out_.memberOf.find(n.operands[k]);
      if (it == out_.memberOf.end()) continue;
      const auto [group, index] = it->second;
      const int64_t placedAt = out_.groups[group].members[index].offset;
      if (!target) {
        target = group;
        base = placedAt - at[k];
        members = out_.groups[group].members;
      } else if (group == *target || std::count(merged.begin(), merged.end(), group)) {
        const int64_t shifted = offsetIn(members, n.operands[k]);
        if (shifted != base + at[k]) return;  // placed elsewhere already
      } else {
        const int64_t shift = base + at[k] - placedAt;
        for (ConcatViews::Member m : out_.groups[group].members) {
          m.offset += shift;
          members.push_back(m);
        }
        merged.push_back(group);
      }
    }
    for (size_t k = 0; k < n.operands.size(); ++k)
      if (!out_.memberOf.count(n.operands[k])) members.push_back({n.operands[k], base + at[k], false, n.result()});
    members.push_back({n.result(), base, true, nullptr});
    if (!rootsAreDisjoint(members)) return;
    // Offsets start at 0 (a concatenation may put bytes before a group's).
    int64_t lowest = 0, bytes = 0;
    for (const auto& m : members) lowest = std::min(lowest, m.offset);
    for (auto& m : members) {
      m.offset -= lowest;
      bytes = std::max(bytes, m.offset + bytesOf(m.value->type));
    }
    const size_t group = target.value_or(out_.groups.size());
    if (!target) out_.groups.emplace_back();
    for (size_t g : merged) out_.groups[g] = {};
    out_.groups[group] = {std::move(members), bytes};
    for (size_t i = 0; i < out_.groups[group].members.size(); ++i)
      out_.memberOf[out_.groups[group].members[i].value] = {group, i};
    out_.nodes.insert(&n);
  }

  ConcatViews take() { return std::move(out_); }

 private:
  /// A static value whose buffer the arena holds: computed by a step.
  bool isArenaValue(const ir::Value* v) const {
    const ir::Node* def = v->definingNode();
    return def && def->op != ir::OpId::Constant && def->op != ir::OpId::Full && !returned_.count(v) &&
           v->type.isStatic();
  }

  static int64_t offsetIn(const std::vector<ConcatViews::Member>& members, const ir::Value* v) {
    for (const auto& m : members)
      if (m.value == v) return m.offset;
    return -1;
  }

  static bool rootsAreDisjoint(const std::vector<ConcatViews::Member>& members) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (const auto& m : members)
      if (!m.view) ranges.emplace_back(m.offset, m.offset + bytesOf(m.value->type));
    std::sort(ranges.begin(), ranges.end());
    int64_t covered = std::numeric_limits<int64_t>::min();  // the end of the ranges so far
    for (const auto& [begin, end] : ranges) {
      if (begin == end) continue;
      if (begin < covered) return false;
      covered = end;
    }
    return true;
  }

  std::unordered_set<const ir::Value*> returned_;
  ConcatViews out_;
};

}  // namespace

ConcatViews findConcatViews(const ir::Region& body) {
  Finder finder(body);
  for (const auto& n : body.nodes()) finder.visit(*n);
  return finder.take();
}

}  // namespace graphc::codegen
