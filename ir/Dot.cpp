#include "ir/Dot.h"

#include <unordered_map>

#include <fmt/format.h>

#include "ir/Printer.h"

namespace graphc::ir {

namespace {

/// A dot string literal's contents.
std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class DotWriter {
 public:
  std::string write(const Graph& g) {
    out_ = fmt::format("digraph \"{}\" {{\n", escape(g.name));
    out_ += "  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n";
    for (const auto& p : g.body.params()) {
      std::string id = fresh();
      line(1, fmt::format("{} [shape=ellipse, label=\"%{}\\n{}\"];", id, escape(p->name), escape(toString(p->type))));
      producer_[p.get()] = id;
    }
    region(g.body, 1);
    for (size_t k = 0; k < g.body.returns.size(); ++k) {
      std::string id = fresh();
      line(1, fmt::format("{} [shape=ellipse, label=\"output{}\"];", id, k));
      edge(g.body.returns[k], id, 1);
    }
    out_ += "}\n";
    return out_;
  }

 private:
  std::string fresh() { return fmt::format("n{}", next_++); }
  std::string cluster() { return fmt::format("cluster_{}", clusters_++); }

  void line(int depth, const std::string& text) { out_ += std::string(2 * depth, ' ') + text + "\n"; }

  void edge(const Value* from, const std::string& to, int depth) {
    auto it = producer_.find(from);
    if (it == producer_.end()) return;
    line(depth, fmt::format("{} -> {} [label=\"{}\"];", it->second, to, escape(toString(from->type))));
  }

  /// The nodes of `r`, whose parameters already have producers.
  void region(const Region& r, int depth) {
    for (const auto& n : r.nodes()) node(*n, depth);
  }

  /// Maps a region's parameters to what the node passes it (skipping the
  /// node's first `skip` operands: cond's predicate).
  void bindParams(const Node& n, const Region& r, size_t skip) {
    for (size_t k = 0; k < r.params().size() && k + skip < n.operands.size(); ++k) {
      auto it = producer_.find(n.operands[k + skip]);
      if (it != producer_.end()) producer_[r.param(k)] = it->second;
    }
  }

  void node(const Node& n, int depth) {
    if (n.op == OpId::Fused) {
      const Attribute* name = n.attrs.find("name");
      const Attribute* kind = n.attrs.find("kind");
      line(depth, fmt::format("subgraph {} {{", cluster()));
      line(depth + 1, fmt::format("label=\"{}\\n({})\"; style=filled; fillcolor=\"#e8f0fe\"; color=\"#4a6fa5\";",
                                  escape(name ? name->s : "fused"), escape(kind ? kind->s : "")));
      const Region& body = *n.regions().front();
      bindParams(n, body, 0);
      region(body, depth + 1);
      line(depth, "}");
      for (size_t k = 0; k < n.numResults() && k < body.returns.size(); ++k) {
        auto it = producer_.find(body.returns[k]);
        if (it != producer_.end()) producer_[n.result(k)] = it->second;
      }
      return;
    }
    if (n.op == OpId::Cond) {
      line(depth, fmt::format("subgraph {} {{", cluster()));
      line(depth + 1, "label=\"cond\"; style=dashed;");
      std::string pred = fresh();
      line(depth + 1, fmt::format("{} [shape=diamond, label=\"cond\"];", pred));
      edge(n.operands.front(), pred, depth + 1);
      std::string merge = fresh();
      for (const auto& r : n.regions()) {
        line(depth + 1, fmt::format("subgraph {} {{", cluster()));
        line(depth + 2, fmt::format("label=\"{}\";", escape(r->label)));
        bindParams(n, *r, 1);
        region(*r, depth + 2);
        line(depth + 1, "}");
        for (const Value* v : r->returns) edge(v, merge, depth + 1);
      }
      line(depth + 1, fmt::format("{} [shape=point];", merge));
      line(depth, "}");
      for (const auto& res : n.results()) producer_[res.get()] = merge;
      return;
    }
    std::string id = fresh();
    line(depth, fmt::format("{} [label=\"{}\"];", id, escape(n.name())));
    for (const Value* v : n.operands) edge(v, id, depth);
    for (const auto& res : n.results()) producer_[res.get()] = id;
  }

  std::string out_;
  int next_ = 0;
  int clusters_ = 0;
  std::unordered_map<const Value*, std::string> producer_;
};

}  // namespace

std::string toDot(const Graph& g) { return DotWriter().write(g); }

}  // namespace graphc::ir
