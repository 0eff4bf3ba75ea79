#include "passes/RegionSweep.h"

#include <cassert>

namespace graphc::passes {

RegionSweep::RegionSweep(ir::Region& r) : region_(r), pending_(r.takeNodes()) {}

RegionSweep::~RegionSweep() {
  while (next()) {
  }
  for (ir::Value*& v : region_.returns) v = resolve(v);
}

ir::Value* RegionSweep::resolve(ir::Value* v) {
  if (replaced_.empty()) return v;
  ir::Value* to = v;
  for (auto it = replaced_.find(to); it != replaced_.end(); it = replaced_.find(to)) to = it->second;
  // Path compression: a chain of replacements is followed once.
  for (auto it = replaced_.find(v); it != replaced_.end() && it->second != to; it = replaced_.find(v)) {
    ir::Value* step = it->second;
    it->second = to;
    v = step;
  }
  return to;
}

ir::Node* RegionSweep::next() {
  if (nextIndex_ == pending_.size()) return current_ = nullptr;
  std::unique_ptr<ir::Node> node = std::move(pending_[nextIndex_++]);
  for (ir::Value*& v : node->operands) v = resolve(v);
  return current_ = region_.append(std::move(node));
}

void RegionSweep::replace(ir::Value* from, ir::Value* to) {
  to = resolve(to);
  if (from == to) return;
  replaced_[from] = to;
  if (counted_) {
    uses_[to] += uses_[from];
    uses_.erase(from);
  }
}

void RegionSweep::dropCurrent() {
  assert(current_ && region_.nodes().back().get() == current_);
  if (counted_)
    for (const ir::Value* v : current_->operands) --uses_[v];
  dropped_.push_back(region_.release(position()));
  current_ = nullptr;
}

int RegionSweep::uses(const ir::Value* v) {
  if (!counted_) {
    counted_ = true;
    auto count = [&](const ir::Node& n) {
      for (ir::Value* o : n.operands) ++uses_[resolve(o)];
    };
    for (const auto& n : region_.nodes()) count(*n);
    for (size_t i = nextIndex_; i < pending_.size(); ++i) count(*pending_[i]);
    for (ir::Value* r : region_.returns) ++uses_[resolve(r)];
  }
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

void RegionSweep::addUses(const ir::Node& inserted) {
  if (counted_)
    for (const ir::Value* v : inserted.operands) ++uses_[v];
}

}  // namespace graphc::passes
