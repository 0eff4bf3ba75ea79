#include "ir/Verifier.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "ir/SizeMath.h"

namespace graphc::ir {

namespace {

class GraphVerifier {
 public:
  GraphVerifier(const Graph& g, DiagnosticEngine& diags) : graph_(g), diags_(diags) {}

  bool run() {
    // A parameter's dim binds its symbols when it is a product of them
    // (the runtime solves `4*B` for B); a sum (`(P+1)`) binds nothing.
    for (const auto& p : graph_.body.params())
      for (const Dim& d : p->type.shape)
        for (const std::string& f : d.factors())
          if (f.front() != '(') boundSymbols_.insert(f);
    region(graph_.body);
    const Region& body = graph_.body;
    if (body.returnTypes() != graph_.resultTypes)
      error(body.returnLoc.known() ? body.returnLoc : graph_.loc,
            fmt::format("@{} returns ({}) but its signature says ({})", graph_.name, toString(body.returnTypes()),
                        toString(graph_.resultTypes)));
    inputUpdates();
    return ok_;
  }

 private:
  void error(const SourceLoc& loc, std::string msg) {
    diags_.error(loc, std::move(msg));
    ok_ = false;
  }

  /// Each `updates %p`: a parameter of the graph's body, updated by one
  /// result of its own type.
  void inputUpdates() {
    std::set<const Value*> updated;
    std::set<size_t> results;
    for (const InputUpdate& u : graph_.inputUpdates) {
      const SourceLoc& at = u.loc.known() ? u.loc : graph_.loc;
      if (u.result >= graph_.resultTypes.size()) {
        error(at, fmt::format("@{} has {} results: no result {} to update an input", graph_.name,
                              graph_.resultTypes.size(), u.result));
        continue;
      }
      if (!u.param || u.param->parentRegion() != &graph_.body || u.param->definingNode()) {
        error(at, fmt::format("result {} of @{} updates a value that is not a parameter of the graph", u.result,
                              graph_.name));
        continue;
      }
      if (u.param->type != graph_.resultTypes[u.result])
        error(at, fmt::format("result {} of @{} is {} but updates '%{}' of type {} in place: the types must match",
                              u.result, graph_.name, toString(graph_.resultTypes[u.result]), u.param->name,
                              toString(u.param->type)));
      if (!updated.insert(u.param).second)
        error(at, fmt::format("'%{}' is updated in place by more than one result of @{}", u.param->name, graph_.name));
      if (!results.insert(u.result).second)
        error(at, fmt::format("result {} of @{} updates more than one parameter", u.result, graph_.name));
    }
  }

  void checkType(const SourceLoc& loc, const TensorType& t) {
    // The static part of the byte count must fit int64 (the symbolic part
    // is checked when the sizes are bound), so every buffer's size can be
    // computed without wrapping.
    std::optional<int64_t> bytes = dtypeSize(t.dtype);
    for (const Dim& d : t.shape) {
      if (d.isStatic()) {
        if (d.size < 0)
          error(loc, fmt::format("type {} has a negative size", toString(t)));
        else if (bytes)
          bytes = mulSizes(*bytes, d.size);
      } else {
        for (const std::string& f : symbolsOf(d))
          if (!boundSymbols_.count(f))
            error(loc, fmt::format("symbolic size '{}' in {} is not bound by any parameter of @{}", f, toString(t),
                                   graph_.name));
      }
    }
    if (!bytes) error(loc, fmt::format("type {} is too large: its byte count overflows int64", toString(t)));
  }

  /// Where each value of a region is defined: params at step 0, the
  /// results of node i at step i + 1. A sorted vector searched by address
  /// rather than a hash set: no allocation per value, which dominated
  /// verifying a 100k-node graph.
  class Definitions {
   public:
    explicit Definitions(const Region& r) {
      entries_.reserve(r.params().size() + r.nodes().size());
      for (const auto& p : r.params()) entries_.emplace_back(p.get(), 0);
      for (size_t i = 0; i < r.nodes().size(); ++i)
        for (const auto& v : r.nodes()[i]->results()) entries_.emplace_back(v.get(), i + 1);
      std::sort(entries_.begin(), entries_.end());
    }
    /// Whether `v` is defined in the region before step `step`.
    bool before(const Value* v, size_t step) const {
      auto it = std::lower_bound(entries_.begin(), entries_.end(), std::pair<const Value*, size_t>(v, 0));
      return it != entries_.end() && it->first == v && it->second < step;
    }

   private:
    std::vector<std::pair<const Value*, size_t>> entries_;
  };

  void region(const Region& r) {
    for (const auto& p : r.params()) checkType(p->loc, p->type);
    const Definitions defined(r);
    for (size_t i = 0; i < r.nodes().size(); ++i) node(*r.nodes()[i], defined, i + 1);
    for (const Value* v : r.returns)
      if (!defined.before(v, SIZE_MAX))
        error(r.returnLoc, v && v->parentRegion() != &r ? "return uses a value from outside its region"
                                                        : "return uses a value that is not defined");
  }

  /// Checks node `n`, step `step` of its region.
  void node(const Node& n, const Definitions& defined, size_t step) {
    const OpInfo& info = n.info();
    for (size_t k = 0; k < n.operands.size(); ++k) {
      const Value* v = n.operands[k];
      if (defined.before(v, step)) continue;
      if (!v || v->parentRegion() == n.parentRegion())
        error(n.loc, fmt::format("operand #{} of '{}' is not defined before its use", k, info.name));
      else
        error(n.loc, fmt::format("operand #{} of '{}' comes from outside its region (regions are isolated; pass "
                                 "the value as an operand)",
                                 k, info.name));
      return;
    }
    if (n.regions().size() != info.regions.size()) {
      error(n.loc, fmt::format("'{}' has {} regions but needs {}", info.name, n.regions().size(), info.regions.size()));
      return;
    }
    for (size_t k = 0; k < info.regions.size(); ++k)
      if (n.regions()[k]->label != info.regions[k])
        error(n.loc, fmt::format("region {} of '{}' must be '{}', not '{}'", k, info.name, info.regions[k],
                                 n.regions()[k]->label));
    for (const auto& r : n.regions()) region(*r);
    for (const auto& v : n.results()) checkType(n.loc, v->type);
    if (!ok_) return;

    std::vector<TensorType> declared;
    for (const auto& v : n.results()) declared.push_back(v->type);
    TypeRuleResult inferred = inferTypes(n, &declared);
    if (!inferred.ok()) {
      error(n.loc, inferred.error);
      return;
    }
    if (inferred.types != declared)
      error(n.loc, fmt::format("'{}' results are ({}) but its operands and attributes give ({})", info.name,
                               toString(declared), toString(inferred.types)));
  }

  const Graph& graph_;
  DiagnosticEngine& diags_;
  std::set<std::string> boundSymbols_;
  bool ok_ = true;
};

}  // namespace

bool verify(const Graph& g, DiagnosticEngine& diags) { return GraphVerifier(g, diags).run(); }

bool verify(const Module& m, DiagnosticEngine& diags) {
  bool ok = true;
  std::set<std::string> names;
  for (const auto& g : m.graphs) {
    if (!names.insert(g->name).second) {
      diags.error(g->loc, fmt::format("redefinition of graph @{}", g->name));
      ok = false;
    }
    ok &= verify(*g, diags);
  }
  return ok;
}

}  // namespace graphc::ir
