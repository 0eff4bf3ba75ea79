// The importer's walk over a model: the listing that locates diagnostics,
// the main graph's initializers, inputs, nodes and outputs, subgraphs (If
// branches), import-time values (folded with the reference interpreter)
// and the specialisation of graph inputs whose values an op needs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_set>

#include <climits>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "frontend/onnx/Importer.h"
#include "ir/Builder.h"
#include "ir/Verifier.h"
#include "runtime/FileIO.h"
#include "runtime/reference/Constants.h"
#include "runtime/reference/Interpreter.h"

namespace graphc::frontend {

namespace onnximport {

std::string identifier(std::string_view name) {
  std::string out;
  for (char ch : name) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' ? ch : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '.') out.insert(out.begin(), '_');
  return out;
}

namespace {

/// A symbolic size's name: letters, digits and '_' (never `inf` or `nan`,
/// which the lexer reads as numbers).
std::string symbolName(std::string_view name) {
  std::string out = identifier(name);
  for (char& ch : out)
    if (ch == '.') ch = '_';
  if (out == "inf" || out == "nan") out.insert(out.begin(), '_');
  return out;
}

/// Text of a name for the listing: printable, on one line.
std::string printable(std::string_view name) {
  std::string out;
  for (char ch : name) out += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
  return out;
}

std::string nodeLabel(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? fmt::format("#{}", index) : printable(n.name());
}

std::string joinNames(const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + printable(n);
  return out;
}

template <typename Infos>
std::string joinInfoNames(const Infos& infos) {
  std::string out;
  for (const auto& i : infos) out += (out.empty() ? "" : ", ") + printable(i.name());
  return out;
}

}  // namespace

Importer::Importer(const onnx::ModelProto& model, std::string fileName, const OnnxImportOptions& options)
    : model_(model), options_(options), external_(options.dataFolder), listing_(std::make_shared<ir::SourceBuffer>()) {
  listing_->name = std::move(fileName);
}

ir::SourceLoc Importer::lineLoc(int line, int col) const { return ir::SourceLoc{listing_, line, col}; }

void Importer::buildListing(const onnx::GraphProto& g, int depth) {
  const std::string indent(static_cast<size_t>(2 * depth), ' ');
  if (depth == 0)
    listing_->text +=
        fmt::format("graph {}({}) -> ({})\n", printable(g.name()), joinInfoNames(g.input()), joinInfoNames(g.output()));
  int line = static_cast<int>(std::count(listing_->text.begin(), listing_->text.end(), '\n')) + 1;
  for (int k = 0; k < g.node_size(); ++k) {
    const onnx::NodeProto& n = g.node(k);
    lineOf_[&n] = line++;
    listing_->text += fmt::format("{}  {}: {}({}) -> {}\n", indent, nodeLabel(n, k), printable(n.op_type()),
                                  joinNames(n.input()), joinNames(n.output()));
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) {
        buildListing(a.g(), depth + 1);
        line = static_cast<int>(std::count(listing_->text.begin(), listing_->text.end(), '\n')) + 1;
      }
      for (const onnx::GraphProto& sub : a.graphs()) {
        buildListing(sub, depth + 1);
        line = static_cast<int>(std::count(listing_->text.begin(), listing_->text.end(), '\n')) + 1;
      }
    }
  }
}

// ---- types ------------------------------------------------------------------

std::optional<ir::TensorType> Importer::typeOf(const onnx::ValueInfoProto& info, const std::string& what) {
  if (!info.has_type()) throw ir::Error(fmt::format("{} has no type", what));
  const onnx::TypeProto& type = info.type();
  if (!type.has_tensor_type()) {
    const char* kind = type.has_sequence_type()   ? "sequence"
                       : type.has_map_type()      ? "map"
                       : type.has_optional_type() ? "optional"
                                                  : "non-tensor";
    throw Unsupported(fmt::format("{} input", kind),
                      fmt::format("{} is a {}; graphc supports tensors only", what, kind));
  }
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  std::optional<ir::DType> dtype = dtypeOf(tensor.elem_type());
  if (!dtype)
    throw Unsupported(
        "dtype " + onnxTypeName(tensor.elem_type()),
        fmt::format("{} has dtype {}, which graphc does not support", what, onnxTypeName(tensor.elem_type())));
  if (!tensor.has_shape())
    throw Unsupported("input of unknown rank", fmt::format("{} has no shape; graphc needs every input's rank", what));
  ir::TensorType t{*dtype, {}};
  for (const onnx::TensorShapeProto::Dimension& d : tensor.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) throw ir::Error(fmt::format("{} has a negative dim {}", what, d.dim_value()));
      t.shape.push_back(ir::Dim::of(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      t.shape.push_back(ir::Dim::sym(symbolName(d.dim_param())));
    } else {
      t.shape.push_back(ir::Dim::sym(fmt::format("d{}", freshSymbols_++)));  // an unnamed dynamic dim
    }
  }
  return t;
}

void Importer::checkOutputType(const onnx::ValueInfoProto& info, const ir::Value* v) {
  if (!info.has_type() || !info.type().has_tensor_type()) return;
  const onnx::TypeProto::Tensor& declared = info.type().tensor_type();
  const std::string what = fmt::format("graph output '{}'", printable(info.name()));
  if (declared.elem_type() != onnx::TensorProto::UNDEFINED && dtypeOf(declared.elem_type()) != v->type.dtype)
    throw ir::Error(fmt::format("{} is declared {}, the graph computes {}", what, onnxTypeName(declared.elem_type()),
                                ir::toString(v->type)));
  if (!declared.has_shape()) return;
  const auto& dims = declared.shape().dim();
  bool differs = dims.size() != v->type.rank();
  for (int k = 0; !differs && k < dims.size(); ++k)
    differs = dims[k].has_dim_value() && v->type.shape[k].isStatic() && dims[k].dim_value() != v->type.shape[k].size;
  if (differs) {
    std::string shape;
    for (const auto& d : dims)
      shape +=
          (shape.empty() ? "" : ", ") + (d.has_dim_value() ? std::to_string(d.dim_value()) : printable(d.dim_param()));
    throw ir::Error(
        fmt::format("{} is declared of shape [{}], the graph computes {}", what, shape, ir::toString(v->type)));
  }
}

// ---- names and values -------------------------------------------------------

ir::Value* Importer::materialize(Scope& scope, const std::string& name, const onnx::TensorProto& proto) {
  runtime::Tensor t = tensorFromProto(proto, fmt::format("initializer '{}'", printable(name)), &external_);
  ir::Value* v = runtime::insertConstant(*scope.region, scope.region->nodes().size(), t, lineLoc(1));
  v->name = identifier(name);
  scope.values[name] = v;
  known_[v] = std::move(t);
  return v;
}

ir::Value* Importer::lookup(const std::string& name) {
  if (shapeValue(name))
    throw Unsupported("symbolic shape as data",
                      fmt::format("'{}' is the shape of a tensor with symbolic sizes; graphc can use "
                                  "it only as a shape (Reshape, Expand, ConstantOfShape), not as data",
                                  printable(name)));
  for (Scope* s = current_; s; s = s->parent && s->parent->region == s->region ? s->parent : nullptr) {
    if (auto it = s->values.find(name); it != s->values.end()) return it->second;
    if (auto it = s->initializers.find(name); it != s->initializers.end()) return materialize(*s, name, *it->second);
  }
  throw ir::Error(
      fmt::format("'{}' is used before it is defined (ONNX lists nodes in topological order)", printable(name)));
}

void Importer::define(const std::string& name, ir::Value* v) {
  if (v->name.empty()) v->name = identifier(name);
  current_->values[name] = v;
}

std::vector<std::string> Importer::inputsBehind(const ir::Value* root) const {
  std::set<const ir::Value*> params;
  std::vector<const ir::Value*> stack{root};
  std::unordered_set<const ir::Value*> seen;
  while (!stack.empty()) {
    const ir::Value* v = stack.back();
    stack.pop_back();
    if (!seen.insert(v).second) continue;
    if (paramNames_.count(v)) params.insert(v);
    if (const ir::Node* n = v->definingNode())
      for (const ir::Value* o : n->operands) stack.push_back(o);
  }
  std::vector<std::string> names;
  for (const auto& p : graph_->body.params())
    if (params.count(p.get())) names.push_back(paramNames_.at(p.get()));
  return names;
}

std::optional<runtime::Tensor> Importer::knownValue(ir::Value* root, bool specialiseInputs) {
  // Post-order over the producers, without recursion: a model can chain
  // thousands of nodes.
  std::vector<std::pair<ir::Value*, bool>> stack{{root, false}};
  std::unordered_set<const ir::Value*> unknown;
  while (!stack.empty()) {
    auto [v, operandsDone] = stack.back();
    stack.pop_back();
    if (known_.count(v) || unknown.count(v)) continue;
    const ir::Node* n = v->definingNode();
    if (!n && specialiseInputs && specialise(v)) {
      continue;  // its users now read a known constant
    }
    // Only small static computations are folded: shapes, axes, masks.
    auto foldable = [](const auto& r) {
      return r->type.isStatic() && *r->type.staticNumElements() <= kMaxImportTimeElements;
    };
    if (!n || !n->regions().empty() || !std::all_of(n->results().begin(), n->results().end(), foldable)) {
      unknown.insert(v);
      continue;
    }
    if (n->op == ir::OpId::Constant || n->op == ir::OpId::Full) {
      if (auto t = runtime::constantTensor(v))
        known_[v] = *t;
      else
        unknown.insert(v);
      continue;
    }
    if (!operandsDone) {
      stack.push_back({v, true});
      for (ir::Value* o : n->operands) stack.push_back({o, false});
      continue;
    }
    std::vector<runtime::Tensor> operands;
    for (const ir::Value* o : n->operands) {
      if (!known_.count(o)) break;
      operands.push_back(known_.at(o));
    }
    if (operands.size() != n->operands.size()) {
      unknown.insert(v);
      continue;
    }
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& r : n->results()) shapes.push_back(runtime::concreteShape(r->type));
    std::vector<runtime::Tensor> results = runtime::evaluateNode(*n, operands, shapes);
    for (size_t k = 0; k < results.size(); ++k) known_[n->result(k)] = std::move(results[k]);
  }
  if (auto it = known_.find(root); it != known_.end()) return it->second;
  return std::nullopt;
}

ir::Value* Importer::specialise(ir::Value* v) {
  auto name = paramNames_.find(v);
  if (name == paramNames_.end() || specialised_.count(v)) return nullptr;
  auto given = options_.knownInputs.find(name->second);
  if (given == options_.knownInputs.end()) return nullptr;
  const runtime::Tensor& t = given->second;
  if (t.type() != v->type)
    throw ir::Error(fmt::format("the value given for input '{}' is {}, the model declares {}", printable(name->second),
                                ir::toString(t.type()), ir::toString(v->type)));
  ir::Value* c = runtime::insertConstant(graph_->body, 0, t, v->loc);
  c->name = v->name;
  graph_->body.replaceAllUses(v, c);
  for (Scope* s = current_; s; s = s->parent)
    for (auto& [key, value] : s->values)
      if (value == v) value = c;
  specialised_.insert(v);
  known_[c] = t;
  return c;
}

// ---- nodes and graphs -------------------------------------------------------

std::vector<std::string> Importer::outerNames(const onnx::GraphProto& g) {
  std::unordered_set<std::string> defined, seen;
  std::vector<std::string> outer;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) outer.push_back(name);
  };
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& i : g.initializer()) defined.insert(i.name());
  for (const onnx::NodeProto& n : g.node()) {
    for (const std::string& in : n.input()) use(in);
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g())
        for (const std::string& name : outerNames(a.g())) use(name);
      for (const onnx::GraphProto& sub : a.graphs())
        for (const std::string& name : outerNames(sub)) use(name);
    }
    for (const std::string& out : n.output()) defined.insert(out);
  }
  for (const auto& o : g.output()) use(o.name());
  return outer;
}

std::vector<ir::Value*> Importer::importBody(const onnx::GraphProto& g, Scope& scope) {
  if (g.input_size() > 0)
    throw Unsupported("subgraph inputs", "subgraphs with inputs (Loop, Scan bodies) are not supported");
  if (g.sparse_initializer_size() > 0) throw Unsupported("sparse initializer", "sparse initializers are not supported");
  Scope* saved = current_;
  current_ = &scope;
  for (const onnx::TensorProto& t : g.initializer()) scope.initializers[t.name()] = &t;
  for (const onnx::NodeProto& n : g.node()) convertNode(n);
  std::vector<ir::Value*> outputs;
  for (const onnx::ValueInfoProto& o : g.output()) outputs.push_back(lookup(o.name()));
  current_ = saved;
  return outputs;
}

void Importer::convertNode(const onnx::NodeProto& node) {
  // The node's line of the listing, at its label.
  const int line = lineOf_.count(&node) ? lineOf_.at(&node) : 1;
  const ir::SourceLoc loc = lineLoc(line, 1 + static_cast<int>(listing_->lineText(line).find_first_not_of(' ')));
  const std::string label = node.name().empty() ? "" : fmt::format(" (node '{}')", printable(node.name()));
  try {
    const std::string& domain = node.domain();
    if (!domain.empty() && domain != "ai.onnx")
      throw Unsupported(
          fmt::format("op {}.{}", printable(domain), printable(node.op_type())),
          fmt::format("unsupported op '{}' of domain '{}'", printable(node.op_type()), printable(domain)));
    const OpMapping* mapping = findOp(node.op_type());
    if (!mapping)
      throw Unsupported("op " + printable(node.op_type()),
                        fmt::format("unsupported op '{}'", printable(node.op_type())));
    for (const onnx::AttributeProto& a : node.attribute())
      if (std::find(mapping->attributes.begin(), mapping->attributes.end(), a.name()) == mapping->attributes.end())
        throw Unsupported(
            fmt::format("{} attribute {}", printable(node.op_type()), printable(a.name())),
            fmt::format("'{}' attribute '{}' is not supported", printable(node.op_type()), printable(a.name())));
    std::vector<ir::Value*> inputs;
    std::vector<const ShapeValue*> shapes;
    for (const std::string& name : node.input()) {
      shapes.push_back(name.empty() ? nullptr : shapeValue(name));
      inputs.push_back(name.empty() || shapes.back() ? nullptr : lookup(name));
    }
    NodeContext c(*this, node, *current_->region, loc, std::move(inputs), std::move(shapes), opset_);
    mapping->convert(c);
    for (int k = 0; k < node.output_size(); ++k)
      if (!node.output(k).empty() && !current_->values.count(node.output(k)) && !shapeValue(node.output(k)))
        throw ir::Error(fmt::format("output {} of '{}' is not computed by graphc", k, printable(node.op_type())));
  } catch (const Unsupported& e) {
    if (std::find(unsupported_.begin(), unsupported_.end(), e.feature) == unsupported_.end())
      unsupported_.push_back(e.feature);
    throw ir::LocatedError(loc, e.what() + label);
  } catch (const ir::LocatedError&) {
    throw;
  } catch (const ir::Error& e) {
    throw ir::LocatedError(loc, e.what() + label);
  }
}

OnnxImport Importer::run(ir::DiagnosticEngine& diags) {
  OnnxImport result;
  const onnx::GraphProto& g = model_.graph();
  buildListing(g, 0);
  const ir::SourceLoc graphLoc = lineLoc(1);
  try {
    for (const onnx::OperatorSetIdProto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    if (opset_ == 0) throw ir::Error("the model imports no opset of the default ONNX domain");
    if (g.sparse_initializer_size() > 0)
      throw Unsupported("sparse initializer", "sparse initializers are not supported");

    auto module = std::make_unique<ir::Module>();
    module->source = listing_;
    auto graph = std::make_unique<ir::Graph>(identifier(g.name().empty() ? "main" : g.name()));
    graph->loc = graphLoc;
    graph_ = graph.get();
    Scope scope{&graph->body, nullptr, {}, {}};
    current_ = &scope;
    for (const onnx::TensorProto& t : g.initializer()) scope.initializers[t.name()] = &t;
    // An input that has an initializer is a constant with a default
    // (IR version < 4 lists every initializer as an input): graphc takes it
    // as the constant.
    for (const onnx::ValueInfoProto& in : g.input()) {
      if (scope.initializers.count(in.name())) continue;
      const std::string what = fmt::format("graph input '{}'", printable(in.name()));
      if (scope.values.count(in.name())) throw ir::Error(what + " is listed twice");
      ir::Value* p = graph->body.addParam(*typeOf(in, what), identifier(in.name()), graphLoc);
      scope.values[in.name()] = p;
      paramNames_[p] = in.name();
    }
    for (const onnx::NodeProto& n : g.node()) convertNode(n);
    for (const onnx::ValueInfoProto& o : g.output()) {
      ir::Value* v = lookup(o.name());
      checkOutputType(o, v);
      graph->body.returns.push_back(v);
      graph->resultTypes.push_back(v->type);
    }
    if (graph->body.returns.empty()) throw ir::Error("the graph has no outputs");
    graph->body.returnLoc = graphLoc;
    for (size_t k = graph->body.params().size(); k-- > 0;)
      if (specialised_.count(graph->body.param(k))) {
        result.specialised.insert(result.specialised.begin(), paramNames_.at(graph->body.param(k)));
        graph->body.removeParam(k);
      }
    for (const auto& p : graph->body.params()) result.inputNames.push_back(paramNames_.at(p.get()));
    module->graphs.push_back(std::move(graph));
    if (!ir::verify(*module, diags)) return result;
    result.module = std::move(module);
  } catch (const Unsupported& e) {
    unsupported_.push_back(e.feature);
    diags.error(graphLoc, e.what());
  } catch (const ir::LocatedError& e) {
    diags.error(e.loc, e.what());
  } catch (const ir::Error& e) {
    diags.error(graphLoc, e.what());
  }
  if (!result.module) result.unsupported = unsupported_;
  return result;
}

}  // namespace onnximport

// ---- the public entry points --------------------------------------------------

namespace {

/// How deep subgraphs (If branches) may nest: the .graph parser's limit on
/// nested regions, so that every imported model prints and parses back.
constexpr int kMaxSubgraphNesting = 64;
/// Protobuf's recursion limit while parsing: a nested subgraph costs three
/// levels (GraphProto, NodeProto, AttributeProto), so this admits models
/// nested deeper than kMaxSubgraphNesting, which the importer then rejects
/// by name. (Protobuf's default, 100, cut models off at 32 If levels as
/// "not parseable".)
constexpr int kParseRecursionLimit = 3 * kMaxSubgraphNesting + 16;
/// A second parse, after a failed one, with this limit tells a model nested
/// too deeply from a truncated one.
constexpr int kDiagnoseRecursionLimit = 2000;

enum class Parse { Ok, TooDeep, Malformed };

/// Parses `model` from the stream `open` makes afresh for each attempt
/// (null: it cannot be made): first at the recursion limit, then, after a
/// failure, at the diagnostic one.
template <typename Open>
Parse parseWith(onnx::ModelProto& model, Open open) {
  auto attempt = [&](int limit) {
    std::optional<google::protobuf::io::FileInputStream> file;
    std::unique_ptr<google::protobuf::io::CodedInputStream> in = open(file);
    if (!in) return false;
    in->SetRecursionLimit(limit);
    model.Clear();
    return model.ParseFromCodedStream(in.get()) && in->ConsumedEntireMessage();
  };
  if (attempt(kParseRecursionLimit)) return Parse::Ok;
  if (attempt(kDiagnoseRecursionLimit)) return Parse::TooDeep;
  return Parse::Malformed;
}

Parse parseModel(std::string_view bytes, onnx::ModelProto& model) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return Parse::Malformed;
  return parseWith(model, [&](auto&) {
    return std::make_unique<google::protobuf::io::CodedInputStream>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                                    static_cast<int>(bytes.size()));
  });
}

/// parseModel for the regular file open as `fd`, read by protobuf in
/// chunks rather than into one buffer first: for a 100 MB model the
/// buffer's page faults and copy cost more than the parse.
Parse parseModelFile(int fd, onnx::ModelProto& model) {
  return parseWith(model,
                   [&](std::optional<google::protobuf::io::FileInputStream>& file)
                       -> std::unique_ptr<google::protobuf::io::CodedInputStream> {
                     if (::lseek(fd, 0, SEEK_SET) != 0) return nullptr;
                     auto in = std::make_unique<google::protobuf::io::CodedInputStream>(&file.emplace(fd, 1 << 20));
                     in->SetTotalBytesLimit(INT32_MAX);
                     return in;
                   });
}

/// The deepest nesting of subgraphs under `g` (0: none), counted no further
/// than `limit` + 1.
int subgraphDepth(const onnx::GraphProto& g, int limit) {
  if (limit < 0) return 1;
  int deepest = 0;
  for (const onnx::NodeProto& n : g.node())
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) deepest = std::max(deepest, 1 + subgraphDepth(a.g(), limit - 1));
      for (const onnx::GraphProto& sub : a.graphs()) deepest = std::max(deepest, 1 + subgraphDepth(sub, limit - 1));
    }
  return deepest;
}

void collectUnsupported(const onnx::GraphProto& g, std::vector<std::string>& out) {
  for (const onnx::NodeProto& n : g.node()) {
    const bool ours = n.domain().empty() || n.domain() == "ai.onnx";
    std::string op = ours ? n.op_type() : n.domain() + "." + n.op_type();
    if ((!ours || !onnximport::findOp(n.op_type())) && std::find(out.begin(), out.end(), op) == out.end())
      out.push_back(op);
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) collectUnsupported(a.g(), out);
      for (const onnx::GraphProto& sub : a.graphs()) collectUnsupported(sub, out);
    }
  }
}

}  // namespace

namespace {

/// The import of a model parsed (or not) from `size` bytes of `fileName`.
OnnxImport importParsed(Parse parsed, const onnx::ModelProto& model, size_t size, const std::string& fileName,
                        ir::DiagnosticEngine& diags, const OnnxImportOptions& options) {
  // A model that cannot be listed is located at its first byte.
  auto file = std::make_shared<ir::SourceBuffer>();
  file->name = fileName;
  file->text = fmt::format("<{} bytes of ONNX protobuf>", size);
  const std::string tooDeep = fmt::format(
      "the model nests subgraphs (If branches) more than {} deep, graphc's limit (the .graph parser's for regions)",
      kMaxSubgraphNesting);
  if (parsed == Parse::Malformed) {
    diags.error(ir::SourceLoc{file, 1, 1},
                "not a valid ONNX model (the protobuf does not parse: truncated or not ONNX)");
    return {};
  }
  if (parsed == Parse::TooDeep ||
      (model.has_graph() && subgraphDepth(model.graph(), kMaxSubgraphNesting) > kMaxSubgraphNesting)) {
    diags.error(ir::SourceLoc{file, 1, 1}, tooDeep);
    return {};
  }
  if (!model.has_graph()) {
    diags.error(ir::SourceLoc{file, 1, 1}, "the ONNX model has no graph");
    return {};
  }
  return onnximport::Importer(model, fileName, options).run(diags);
}

}  // namespace

OnnxImport importOnnx(std::string_view bytes, const std::string& fileName, ir::DiagnosticEngine& diags,
                      const OnnxImportOptions& options) {
  onnx::ModelProto model;
  const Parse parsed = parseModel(bytes, model);
  return importParsed(parsed, model, bytes.size(), fileName, diags, options);
}

OnnxImport importOnnxFile(const std::string& path, ir::DiagnosticEngine& diags, const OnnxImportOptions& options) {
  OnnxImportOptions withFolder = options;
  if (withFolder.dataFolder.empty()) {
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    withFolder.dataFolder = folder.empty() ? "." : folder.string();
  }
  // A regular file within the size limit is parsed straight from its
  // descriptor; anything else (a pipe, a directory, an oversized file)
  // goes through readFile, which reads streams and words the errors.
  // O_NONBLOCK: looking at a FIFO must not wait for its writer.
  {
    struct Closer {
      int fd;
      ~Closer() {
        if (fd >= 0) ::close(fd);
      }
    } f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    struct stat info{};
    if (f.fd >= 0 && ::fstat(f.fd, &info) == 0 && S_ISREG(info.st_mode) &&
        info.st_size <= runtime::kMaxInputFileBytes) {
      onnx::ModelProto model;
      const Parse parsed = parseModelFile(f.fd, model);
      return importParsed(parsed, model, static_cast<size_t>(info.st_size), path, diags, withFolder);
    }
  }
  std::string bytes;
  try {
    bytes = runtime::readFile(path);
  } catch (const ir::Error& e) {
    diags.error({}, e.what());
    return {};
  }
  return importOnnx(bytes, path, diags, withFolder);
}

bool isOnnxPath(std::string_view path) { return path.size() >= 5 && path.substr(path.size() - 5) == ".onnx"; }

std::vector<std::string> onnxGraphInputs(std::string_view bytes) {
  onnx::ModelProto model;
  if (parseModel(bytes, model) != Parse::Ok) throw ir::Error("not a valid ONNX model");
  std::unordered_set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const auto& in : model.graph().input())
    if (!initializers.count(in.name())) names.push_back(in.name());
  return names;
}

std::vector<std::string> unsupportedOnnxOps(std::string_view bytes) {
  onnx::ModelProto model;
  if (parseModel(bytes, model) != Parse::Ok) throw ir::Error("not a valid ONNX model");
  std::vector<std::string> out;
  collectUnsupported(model.graph(), out);
  return out;
}

}  // namespace graphc::frontend
