#include "ir/Printer.h"

#include <set>
#include <unordered_map>

#include <fmt/format.h>

namespace graphc::ir {

bool isPlainIdentifier(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return true;
}

namespace {

/// Names the values of one region. Regions are isolated, so each region is
/// its own namespace: source names are kept where they are free, the rest
/// are numbered.
class RegionNames {
 public:
  explicit RegionNames(const Region& r) {
    std::vector<const Value*> values;
    for (const auto& p : r.params()) values.push_back(p.get());
    for (const auto& n : r.nodes())
      for (const auto& v : n->results()) values.push_back(v.get());
    std::set<std::string> taken;
    for (const Value* v : values)
      if (isPlainIdentifier(v->name)) taken.insert(v->name);
    std::set<std::string> used;
    int next = 0;
    for (const Value* v : values) {
      std::string name = v->name;
      if (!isPlainIdentifier(name) || used.count(name)) {
        do name = std::to_string(next++);
        while (taken.count(name) || used.count(name));
      }
      used.insert(name);
      names_[v] = "%" + name;
    }
  }
  const std::unordered_map<const Value*, std::string>& all() const { return names_; }
  const std::string& operator()(const Value* v) const {
    static const std::string unknown = "%<outside region>";
    auto it = names_.find(v);
    return it == names_.end() ? unknown : it->second;
  }

 private:
  std::unordered_map<const Value*, std::string> names_;
};

class Printer {
 public:
  explicit Printer(const AttributeTextOptions& options) : options_(options) {}
  std::string out;

  void graph(const Graph& g) {
    RegionNames names(g.body);
    out += fmt::format("graph @{}(", isPlainIdentifier(g.name) ? g.name : "graph");
    params(g.body, names);
    out += ") -> (";
    for (size_t k = 0; k < g.resultTypes.size(); ++k) {
      out += (k ? ", " : "") + toString(g.resultTypes[k]);
      if (const Value* p = g.updatedParam(k)) out += " updates " + names(p);
    }
    out += ") {\n";
    body(g.body, names, 1);
    out += "}\n";
  }

 private:
  AttributeTextOptions options_;

  void params(const Region& r, const RegionNames& names) {
    for (size_t k = 0; k < r.params().size(); ++k) {
      const Value* p = r.param(k);
      out += fmt::format("{}{}: {}", k ? ", " : "", names(p), toString(p->type));
    }
  }

  void indent(int depth) { out.append(static_cast<size_t>(depth) * 2, ' '); }

  void body(const Region& r, const RegionNames& names, int depth) {
    for (const auto& n : r.nodes()) node(*n, names, depth);
    indent(depth);
    out += "return";
    for (size_t k = 0; k < r.returns.size(); ++k) out += (k ? ", " : " ") + names(r.returns[k]);
    out += "\n";
  }

  void node(const Node& n, const RegionNames& names, int depth) {
    indent(depth);
    for (size_t k = 0; k < n.numResults(); ++k) out += (k ? ", " : "") + names(n.result(k));
    out += fmt::format(" = {}(", n.name());
    for (size_t k = 0; k < n.operands.size(); ++k) out += (k ? ", " : "") + names(n.operands[k]);
    out += ")";
    if (!n.attrs.empty()) {
      out += " {";
      bool first = true;
      for (const auto& [name, value] : n.attrs) {
        out += fmt::format("{}{} = {}", first ? "" : ", ", name, toString(value, options_));
        first = false;
      }
      out += "}";
    }
    for (const auto& region : n.regions()) {
      RegionNames inner(*region);
      out += fmt::format(" {}(", region->label);
      params(*region, inner);
      out += ") {\n";
      body(*region, inner, depth + 1);
      indent(depth);
      out += "}";
    }
    out += " : ";
    for (size_t k = 0; k < n.numResults(); ++k) out += (k ? ", " : "") + toString(n.result(k)->type);
    out += "\n";
  }
};

}  // namespace

std::unordered_map<const Value*, std::string> valueNames(const Region& r) { return RegionNames(r).all(); }

std::string print(const Graph& g, const AttributeTextOptions& options) {
  Printer p(options);
  p.graph(g);
  return p.out;
}

std::string print(const Module& m, const AttributeTextOptions& options) {
  std::string out;
  for (size_t k = 0; k < m.graphs.size(); ++k) {
    if (k) out += "\n";
    out += print(*m.graphs[k], options);
  }
  return out;
}

}  // namespace graphc::ir
