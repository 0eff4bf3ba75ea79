// The graph IR: a Module holds Graphs; a Graph is a signature plus a body
// Region; a Region is an ordered list of Nodes with its own parameters and
// returned values; a Node is one op application producing Values. Regions
// are isolated: a node's operands come from its own region only (as
// torch.cond passes its operands explicitly), which the verifier checks.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/Attribute.h"
#include "ir/Diagnostics.h"
#include "ir/Ops.h"
#include "ir/Type.h"

namespace graphc::ir {

class Node;
class Region;

/// An SSA value: a region parameter or a node result.
class Value {
 public:
  TensorType type;
  /// The name it had in the source (without '%'); the printer uses it when
  /// it is free and makes one up otherwise.
  std::string name;
  SourceLoc loc;

  Node* definingNode() const { return node_; }
  Region* parentRegion() const { return region_; }
  /// Position among the node's results or the region's parameters.
  int index() const { return index_; }

 private:
  friend class Node;
  friend class Region;
  static std::unique_ptr<Value> create(TensorType type, std::string name, SourceLoc loc);
  Node* node_ = nullptr;
  Region* region_ = nullptr;
  int index_ = 0;
};

class Node {
 public:
  Node(OpId op, std::vector<Value*> operands, AttrMap attrs, SourceLoc loc);

  OpId op;
  std::vector<Value*> operands;
  AttrMap attrs;
  SourceLoc loc;

  const OpInfo& info() const { return opInfo(op); }
  std::string_view name() const { return info().name; }

  const std::vector<std::unique_ptr<Value>>& results() const { return results_; }
  Value* result(size_t k = 0) const { return results_[k].get(); }
  size_t numResults() const { return results_.size(); }
  Value* addResult(TensorType type, std::string name = {}, SourceLoc loc = {});

  const std::vector<std::unique_ptr<Region>>& regions() const { return regions_; }
  Region& addRegion(std::string label);
  Region* parentRegion() const { return parent_; }

 private:
  friend class Region;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<std::unique_ptr<Region>> regions_;
  Region* parent_ = nullptr;
};

class Region {
 public:
  explicit Region(std::string label, Node* parent = nullptr) : label(std::move(label)), parent_(parent) {}

  std::string label;  // "then", "else", "body"; empty for a graph's body
  std::vector<Value*> returns;
  SourceLoc returnLoc;

  const std::vector<std::unique_ptr<Value>>& params() const { return params_; }
  Value* param(size_t k) const { return params_[k].get(); }
  Value* addParam(TensorType type, std::string name = {}, SourceLoc loc = {});
  /// Removes parameter `k`, which must be unused; later ones move down.
  void removeParam(size_t k);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  /// Appends a node; its results are added by the caller.
  Node* append(std::unique_ptr<Node> node);
  /// Inserts before position `pos` of nodes().
  Node* insert(size_t pos, std::unique_ptr<Node> node);
  /// Removes the nodes for which `dead` holds (their results must be unused).
  template <typename Pred>
  size_t removeIf(Pred dead) {
    size_t before = nodes_.size();
    std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) { return dead(*n); });
    return before - nodes_.size();
  }
  /// Takes the node at `pos` out of the region (its results keep their uses).
  std::unique_ptr<Node> release(size_t pos);
  /// Replaces every use of `from` by `to` in this region (and the returns):
  /// a walk of the region, so a pass that replaces many values sweeps the
  /// region once instead (passes::RegionSweep).
  void replaceAllUses(Value* from, Value* to);
  /// Moves every node out, leaving the params and returns: for a pass that
  /// puts them back one by one (passes::RegionSweep). The nodes keep this
  /// region as their parent.
  std::vector<std::unique_ptr<Node>> takeNodes() { return std::exchange(nodes_, {}); }
  /// Reorders nodes so that each comes after the producers of its operands,
  /// keeping the present order wherever it is already valid.
  void sortTopologically();

  Node* parentNode() const { return parent_; }
  std::vector<TensorType> paramTypes() const;
  std::vector<TensorType> returnTypes() const;

 private:
  std::vector<std::unique_ptr<Value>> params_;
  std::vector<std::unique_ptr<Node>> nodes_;
  Node* parent_;
};

/// A graph result that updates one of the graph's inputs in place (XLA's
/// input_output_alias, JAX's donate_argnums): after a run, the input's
/// buffer holds the result, and the result is that buffer. The text form is
/// `-> (f32[4] updates %w)`. The verifier checks that the types match and
/// that each input is updated at most once; reading the input after its
/// update is computed is allowed (the plan then computes the update aside
/// and copies it in after the last read).
struct InputUpdate {
  size_t result = 0;       // position among the graph's results
  Value* param = nullptr;  // a parameter of the graph's body
  SourceLoc loc;
};

class Graph {
 public:
  explicit Graph(std::string name) : name(std::move(name)), body("") {}

  std::string name;  // without '@'
  Region body;
  std::vector<TensorType> resultTypes;
  /// In result order.
  std::vector<InputUpdate> inputUpdates;
  SourceLoc loc;

  /// The parameter result `k` updates in place, or null.
  const Value* updatedParam(size_t k) const;
  /// The result that updates parameter `p` in place, or -1.
  int updatingResult(const Value* p) const;
};

class Module {
 public:
  std::vector<std::unique_ptr<Graph>> graphs;
  std::shared_ptr<const SourceBuffer> source;  // keeps locations printable

  /// `@main` if present, else the first graph; null for an empty module.
  Graph* entry() const;
  Graph* find(std::string_view name) const;
};

/// Runs the node's type rule on its operands, attributes and regions.
/// `declared` are the result types to check creation ops against: the ones
/// written in the source, or the node's current ones.
TypeRuleResult inferTypes(const Node& n, const std::vector<TensorType>* declared);

/// Copies the nodes of `from` into `into` before position `pos`, with
/// `from`'s parameters standing for `args`; returns what `from` returns.
std::vector<Value*> inlineRegion(const Region& from, Region& into, size_t pos, const std::vector<Value*>& args);

/// Whether `r` or a region nested in it holds an `op` node.
bool containsOp(const Region& r, OpId op);

/// Deep copy of a module (values re-created, names and locations kept).
std::unique_ptr<Module> clone(const Module& m);

}  // namespace graphc::ir
