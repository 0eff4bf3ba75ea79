#include "ir/Graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

namespace graphc::ir {

Node::Node(OpId op, std::vector<Value*> operands, AttrMap attrs, SourceLoc loc)
    : op(op), operands(std::move(operands)), attrs(std::move(attrs)), loc(std::move(loc)) {}

std::unique_ptr<Value> Value::create(TensorType type, std::string name, SourceLoc loc) {
  auto v = std::make_unique<Value>();
  v->type = std::move(type);
  v->name = std::move(name);
  v->loc = std::move(loc);
  return v;
}

Value* Node::addResult(TensorType type, std::string name, SourceLoc loc) {
  auto v = Value::create(std::move(type), std::move(name), std::move(loc));
  v->node_ = this;
  v->region_ = parent_;
  v->index_ = static_cast<int>(results_.size());
  results_.push_back(std::move(v));
  return results_.back().get();
}

Region& Node::addRegion(std::string label) {
  regions_.push_back(std::make_unique<Region>(std::move(label), this));
  return *regions_.back();
}

Value* Region::addParam(TensorType type, std::string name, SourceLoc loc) {
  auto v = Value::create(std::move(type), std::move(name), std::move(loc));
  v->region_ = this;
  v->index_ = static_cast<int>(params_.size());
  params_.push_back(std::move(v));
  return params_.back().get();
}

bool containsOp(const Region& r, OpId op) {
  for (const auto& n : r.nodes()) {
    if (n->op == op) return true;
    for (const auto& inner : n->regions())
      if (containsOp(*inner, op)) return true;
  }
  return false;
}

void Region::removeParam(size_t k) {
  params_.erase(params_.begin() + static_cast<std::ptrdiff_t>(k));
  for (size_t i = k; i < params_.size(); ++i) params_[i]->index_ = static_cast<int>(i);
}

Node* Region::append(std::unique_ptr<Node> node) { return insert(nodes_.size(), std::move(node)); }

Node* Region::insert(size_t pos, std::unique_ptr<Node> node) {
  node->parent_ = this;
  for (auto& r : node->results_) r->region_ = this;
  auto it = nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(pos), std::move(node));
  return it->get();
}

std::unique_ptr<Node> Region::release(size_t pos) {
  std::unique_ptr<Node> node = std::move(nodes_[pos]);
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(pos));
  node->parent_ = nullptr;
  return node;
}

void Region::sortTopologically() {
  // Kahn's algorithm, always taking the earliest ready node: stable.
  std::unordered_map<const Node*, size_t> position;
  for (size_t k = 0; k < nodes_.size(); ++k) position[nodes_[k].get()] = k;
  std::vector<int> waiting(nodes_.size(), 0);
  std::vector<std::vector<size_t>> users(nodes_.size());
  for (size_t k = 0; k < nodes_.size(); ++k)
    for (const Value* v : nodes_[k]->operands)
      if (v->definingNode() && position.count(v->definingNode())) {
        ++waiting[k];
        users[position[v->definingNode()]].push_back(k);
      }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;  // smallest index on top
  for (size_t k = 0; k < nodes_.size(); ++k)
    if (waiting[k] == 0) ready.push(k);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t k = ready.top();
    ready.pop();
    order.push_back(k);
    for (size_t u : users[k])
      if (--waiting[u] == 0) ready.push(u);
  }
  if (order.size() != nodes_.size()) return;  // a cycle: the verifier reports it
  std::vector<std::unique_ptr<Node>> sorted;
  for (size_t k : order) sorted.push_back(std::move(nodes_[k]));
  nodes_ = std::move(sorted);
}

void Region::replaceAllUses(Value* from, Value* to) {
  for (auto& n : nodes_)
    for (Value*& v : n->operands)
      if (v == from) v = to;
  for (Value*& v : returns)
    if (v == from) v = to;
}

std::vector<TensorType> Region::paramTypes() const {
  std::vector<TensorType> out;
  for (const auto& p : params_) out.push_back(p->type);
  return out;
}

std::vector<TensorType> Region::returnTypes() const {
  std::vector<TensorType> out;
  for (const Value* v : returns) out.push_back(v->type);
  return out;
}

TypeRuleResult inferTypes(const Node& n, const std::vector<TensorType>* declared) {
  std::vector<TensorType> operandTypes;
  for (const Value* v : n.operands) operandTypes.push_back(v->type);
  std::vector<std::vector<TensorType>> regionParams, regionResults;
  for (const auto& r : n.regions()) {
    regionParams.push_back(r->paramTypes());
    regionResults.push_back(r->returnTypes());
  }
  return inferTypes(n.info(), TypeRuleInput{operandTypes, n.attrs, regionParams, regionResults, declared});
}

Graph* Module::entry() const {
  if (Graph* g = find("main")) return g;
  return graphs.empty() ? nullptr : graphs.front().get();
}

Graph* Module::find(std::string_view name) const {
  for (const auto& g : graphs)
    if (g->name == name) return g.get();
  return nullptr;
}

namespace {
using ValueMap = std::unordered_map<const Value*, Value*>;

/// Copies the nodes of `from` into `to` before `pos`, mapping values by `map`.
size_t cloneNodes(const Region& from, Region& to, size_t pos, ValueMap& map);

void cloneRegion(const Region& from, Region& to, ValueMap& map) {
  for (const auto& p : from.params()) map[p.get()] = to.addParam(p->type, p->name, p->loc);
  cloneNodes(from, to, to.nodes().size(), map);
  for (const Value* v : from.returns) to.returns.push_back(map.count(v) ? map.at(v) : const_cast<Value*>(v));
  to.returnLoc = from.returnLoc;
}

size_t cloneNodes(const Region& from, Region& to, size_t pos, ValueMap& map) {
  for (const auto& n : from.nodes()) {
    std::vector<Value*> operands;
    for (const Value* v : n->operands) operands.push_back(map.count(v) ? map.at(v) : const_cast<Value*>(v));
    Node* copy = to.insert(pos++, std::make_unique<Node>(n->op, std::move(operands), n->attrs, n->loc));
    for (const auto& r : n->results()) map[r.get()] = copy->addResult(r->type, r->name, r->loc);
    for (const auto& region : n->regions()) cloneRegion(*region, copy->addRegion(region->label), map);
  }
  return pos;
}
}  // namespace

std::vector<Value*> inlineRegion(const Region& from, Region& into, size_t pos, const std::vector<Value*>& args) {
  ValueMap map;
  for (size_t k = 0; k < args.size(); ++k) map[from.param(k)] = args[k];
  cloneNodes(from, into, pos, map);
  std::vector<Value*> results;
  for (const Value* v : from.returns) results.push_back(map.at(v));
  return results;
}

const Value* Graph::updatedParam(size_t k) const {
  for (const InputUpdate& u : inputUpdates)
    if (u.result == k) return u.param;
  return nullptr;
}

int Graph::updatingResult(const Value* p) const {
  for (const InputUpdate& u : inputUpdates)
    if (u.param == p) return static_cast<int>(u.result);
  return -1;
}

std::unique_ptr<Module> clone(const Module& m) {
  auto out = std::make_unique<Module>();
  out->source = m.source;
  for (const auto& g : m.graphs) {
    auto copy = std::make_unique<Graph>(g->name);
    copy->resultTypes = g->resultTypes;
    copy->loc = g->loc;
    ValueMap map;
    cloneRegion(g->body, copy->body, map);
    for (const InputUpdate& u : g->inputUpdates) copy->inputUpdates.push_back({u.result, map.at(u.param), u.loc});
    out->graphs.push_back(std::move(copy));
  }
  return out;
}

}  // namespace graphc::ir
