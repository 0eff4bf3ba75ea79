#include "deploy/GraphJson.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "ir/Verifier.h"

namespace graphc::deploy {

namespace {

using nlohmann::json;

// ---- writing ----------------------------------------------------------------

json typeToJson(const ir::TensorType& t) {
  json shape = json::array();
  for (const ir::Dim& d : t.shape) {
    if (d.isStatic())
      shape.push_back(d.size);
    else
      shape.push_back(ir::toString(d));
  }
  return {{"dtype", ir::dtypeName(t.dtype)}, {"shape", std::move(shape)}};
}

class Writer {
 public:
  explicit Writer(const DenseToJson& dense) : dense_(dense) {}

  json region(const ir::Region& r) {
    std::unordered_map<const ir::Value*, int64_t> ids;
    json params = json::array();
    for (const auto& p : r.params()) {
      ids.emplace(p.get(), static_cast<int64_t>(ids.size()));
      params.push_back(value(*p));
    }
    json nodes = json::array();
    for (const auto& n : r.nodes()) {
      json operands = json::array();
      for (const ir::Value* v : n->operands) operands.push_back(ids.at(v));
      json attrs = json::object();
      for (const auto& [name, a] : n->attrs) attrs[name] = attribute(a);
      json results = json::array();
      for (const auto& v : n->results()) {
        ids.emplace(v.get(), static_cast<int64_t>(ids.size()));
        results.push_back(value(*v));
      }
      json regions = json::array();
      for (const auto& sub : n->regions()) regions.push_back(region(*sub));
      nodes.push_back({{"op", n->name()},
                       {"operands", std::move(operands)},
                       {"attrs", std::move(attrs)},
                       {"results", std::move(results)},
                       {"regions", std::move(regions)}});
    }
    json returns = json::array();
    for (const ir::Value* v : r.returns) returns.push_back(ids.at(v));
    return {{"label", r.label}, {"params", std::move(params)}, {"nodes", std::move(nodes)}, {"returns", returns}};
  }

 private:
  static json value(const ir::Value& v) { return {{"name", v.name}, {"type", typeToJson(v.type)}}; }

  json attribute(const ir::Attribute& a) {
    using K = ir::Attribute::Kind;
    switch (a.kind) {
      case K::Int: return {{"int", a.i}};
      case K::Float: return {{"float", fmt::format("{:a}", a.f)}};
      case K::Bool: return {{"bool", a.b}};
      case K::String: return {{"string", a.s}};
      case K::DType: return {{"dtype", ir::dtypeName(a.dtype)}};
      case K::Symbol: return {{"symbol", a.s}};
      case K::List: {
        json items = json::array();
        for (const ir::Attribute& item : a.list) items.push_back(attribute(item));
        return {{"list", std::move(items)}};
      }
      case K::Dense: return {{"dense", dense_(*a.dense)}};
    }
    return {};
  }

  const DenseToJson& dense_;
};

// ---- reading ----------------------------------------------------------------

[[noreturn]] void fail(const std::string& what) { throw ir::Error("graph.json: " + what); }

const json& field(const json& object, const char* name, json::value_t kind) {
  if (!object.is_object()) fail(fmt::format("expected an object holding '{}'", name));
  auto it = object.find(name);
  if (it == object.end()) fail(fmt::format("missing '{}'", name));
  const bool ok = kind == json::value_t::number_integer ? it->is_number_integer() : it->type() == kind;
  if (!ok) fail(fmt::format("'{}' has the wrong kind ({})", name, it->type_name()));
  return *it;
}

const json& array(const json& object, const char* name) { return field(object, name, json::value_t::array); }
std::string text(const json& object, const char* name) {
  return field(object, name, json::value_t::string).get<std::string>();
}

ir::DType dtypeOf(const std::string& name) {
  std::optional<ir::DType> t = ir::parseDType(name);
  if (!t) fail(fmt::format("unknown dtype '{}'", name));
  return *t;
}

ir::TensorType typeFromJson(const json& j) {
  ir::TensorType t;
  t.dtype = dtypeOf(text(j, "dtype"));
  for (const json& d : array(j, "shape")) {
    if (d.is_number_integer()) {
      if (d.get<int64_t>() < 0) fail("a negative dim");
      t.shape.push_back(ir::Dim::of(d.get<int64_t>()));
    } else if (d.is_string()) {
      std::optional<ir::Dim> dim = ir::parseDim(d.get<std::string>());
      if (!dim || dim->isStatic()) fail(fmt::format("'{}' is not a symbolic dim", d.get<std::string>()));
      t.shape.push_back(*dim);
    } else {
      fail("a dim is neither an integer nor a symbolic size");
    }
  }
  return t;
}

class Reader {
 public:
  explicit Reader(const DenseFromJson& dense) : dense_(dense) {}

  void region(const json& j, ir::Region& r, int depth) {
    if (depth > kMaxJsonNesting) fail("regions nested too deeply");
    std::vector<ir::Value*> values;
    for (const json& p : array(j, "params"))
      values.push_back(r.addParam(typeFromJson(field(p, "type", json::value_t::object)), text(p, "name")));
    for (const json& n : array(j, "nodes")) {
      const std::string opName = text(n, "op");
      std::optional<ir::OpId> op = ir::lookupOp(opName);
      if (!op) fail(fmt::format("unknown op '{}'", opName));
      std::vector<ir::Value*> operands;
      for (const json& id : array(n, "operands")) operands.push_back(valueAt(values, id));
      ir::AttrMap attrs;
      for (const auto& [name, a] : field(n, "attrs", json::value_t::object).items())
        attrs.set(name, attribute(a, depth + 1));
      ir::Node* node =
          r.append(std::make_unique<ir::Node>(*op, std::move(operands), std::move(attrs), ir::SourceLoc{}));
      for (const json& v : array(n, "results"))
        values.push_back(node->addResult(typeFromJson(field(v, "type", json::value_t::object)), text(v, "name")));
      for (const json& sub : array(n, "regions")) region(sub, node->addRegion(text(sub, "label")), depth + 1);
    }
    for (const json& id : array(j, "returns")) r.returns.push_back(valueAt(values, id));
  }

 private:
  static ir::Value* valueAt(const std::vector<ir::Value*>& values, const json& id) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= static_cast<int64_t>(values.size()))
      fail("a value id that names no earlier value of its region");
    return values[static_cast<size_t>(id.get<int64_t>())];
  }

  ir::Attribute attribute(const json& j, int depth) {
    if (depth > kMaxJsonNesting) fail("attributes nested too deeply");
    if (!j.is_object() || j.size() != 1) fail("an attribute is not an object with one field");
    const std::string kind = j.begin().key();
    const json& v = j.begin().value();
    if (kind == "int" && v.is_number_integer()) return ir::Attribute::ofInt(v.get<int64_t>());
    if (kind == "bool" && v.is_boolean()) return ir::Attribute::ofBool(v.get<bool>());
    if (kind == "string" && v.is_string()) return ir::Attribute::ofString(v.get<std::string>());
    if (kind == "symbol" && v.is_string()) return ir::Attribute::ofSymbol(v.get<std::string>());
    if (kind == "dtype" && v.is_string()) return ir::Attribute::ofDType(dtypeOf(v.get<std::string>()));
    if (kind == "float" && v.is_string()) {
      const std::string s = v.get<std::string>();
      char* end = nullptr;
      const double f = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) fail(fmt::format("'{}' is not a float", s));
      return ir::Attribute::ofFloat(f);
    }
    if (kind == "list" && v.is_array()) {
      std::vector<ir::Attribute> items;
      for (const json& item : v) items.push_back(attribute(item, depth + 1));
      return ir::Attribute::ofList(std::move(items));
    }
    if (kind == "dense") return dense_(v);
    fail(fmt::format("an attribute '{}' of the wrong kind", kind));
  }

  const DenseFromJson& dense_;
};

}  // namespace

json graphToJson(const ir::Graph& g, const DenseToJson& dense) {
  json results = json::array();
  for (const ir::TensorType& t : g.resultTypes) results.push_back(typeToJson(t));
  json out = {{"name", g.name}, {"results", std::move(results)}, {"body", Writer(dense).region(g.body)}};
  // Result k updates parameter p in place: [k, p] (absent when none does, as in older packages).
  if (!g.inputUpdates.empty()) {
    json updates = json::array();
    for (const ir::InputUpdate& u : g.inputUpdates) updates.push_back({u.result, u.param->index()});
    out["updates"] = std::move(updates);
  }
  return out;
}

std::unique_ptr<ir::Module> graphFromJson(const json& j, const DenseFromJson& dense) {
  auto m = std::make_unique<ir::Module>();
  try {
    auto g = std::make_unique<ir::Graph>(text(j, "name"));
    for (const json& t : array(j, "results")) g->resultTypes.push_back(typeFromJson(t));
    Reader(dense).region(field(j, "body", json::value_t::object), g->body, 0);
    if (j.contains("updates"))
      for (const json& u : array(j, "updates")) {
        if (!u.is_array() || u.size() != 2 || !u[0].is_number_unsigned() || !u[1].is_number_unsigned() ||
            u[1].get<size_t>() >= g->body.params().size())
          fail("an input update that is not [result, parameter]");
        g->inputUpdates.push_back({u[0].get<size_t>(), g->body.param(u[1].get<size_t>()), {}});
      }
    m->graphs.push_back(std::move(g));
  } catch (const json::exception& e) {
    fail(e.what());
  }
  ir::DiagnosticEngine diags;
  if (!ir::verify(*m, diags)) {
    const std::vector<ir::Diagnostic>& all = diags.all();
    fail("the graph does not verify: " + (all.empty() ? std::string("?") : all.front().message));
  }
  return m;
}

}  // namespace graphc::deploy
