// The importer's state while it walks a model; internal to frontend/onnx.
// Names resolve through scopes: the main graph's, then one per subgraph
// being imported. A subgraph imported as a cond branch gets a scope of its
// own region (its outer values arrive as the branch's parameters); one
// inlined into the current region (an If on a known predicate) falls
// through to the scope around it.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/onnx/ImportContext.h"
#include "frontend/onnx/OnnxImporter.h"

namespace graphc::frontend::onnximport {

struct Scope {
  ir::Region* region = nullptr;
  Scope* parent = nullptr;  // looked at only when it is of the same region
  std::unordered_map<std::string, ir::Value*> values;
  /// Initializers of this (sub)graph, made into constants when first used.
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
};

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string fileName, const OnnxImportOptions& options);

  /// Imports the model; failures are reported to `diags`.
  OnnxImport run(ir::DiagnosticEngine& diags);

  // ---- for the converters ----

  /// The value `name` has in the current scope; fails when it has none.
  ir::Value* lookup(const std::string& name);
  /// Binds `name` to `v` in the current scope (a node's output).
  void define(const std::string& name, ir::Value* v);
  /// Binds `name` to a shape with symbolic sizes (it has no IR value).
  void defineShape(const std::string& name, ShapeValue v) { shapeValues_[name] = std::move(v); }
  const ShapeValue* shapeValue(const std::string& name) const {
    auto it = shapeValues_.find(name);
    return it == shapeValues_.end() ? nullptr : &it->second;
  }
  /// What `v` holds, when it can be known at import time (constants and
  /// what is computed from them alone, folded by the reference interpreter).
  /// With `specialiseInputs`, graph inputs it depends on that the import was
  /// given values for are specialised (only where an op needs the value:
  /// otherwise a test of, say, a cond on an input would fold it away).
  std::optional<runtime::Tensor> knownValue(ir::Value* v, bool specialiseInputs = false);
  /// When `v` is a parameter of the main graph whose value the import was
  /// given: replaces it by a constant everywhere and returns the constant.
  ir::Value* specialise(ir::Value* v);
  /// The ONNX names of the main graph's inputs that `v` is computed from
  /// (what `--input NAME=FILE` could make known), in the graph's order.
  std::vector<std::string> inputsBehind(const ir::Value* v) const;

  /// The names a subgraph (and the subgraphs inside it) reads from the
  /// scopes around it, in the order first read.
  static std::vector<std::string> outerNames(const onnx::GraphProto& g);
  /// Imports `g`'s initializers and nodes into `scope` (whose region they
  /// go to) and returns the values of its outputs.
  std::vector<ir::Value*> importBody(const onnx::GraphProto& g, Scope& scope);
  Scope& currentScope() { return *current_; }
  const ExternalData& externalData() const { return external_; }

 private:
  ir::SourceLoc lineLoc(int line, int col = 1) const;
  void buildListing(const onnx::GraphProto& g, int depth);
  void convertNode(const onnx::NodeProto& node);
  std::optional<ir::TensorType> typeOf(const onnx::ValueInfoProto& info, const std::string& what);
  void checkOutputType(const onnx::ValueInfoProto& info, const ir::Value* v);
  ir::Value* materialize(Scope& scope, const std::string& name, const onnx::TensorProto& t);

  const onnx::ModelProto& model_;
  OnnxImportOptions options_;
  ExternalData external_;
  std::shared_ptr<ir::SourceBuffer> listing_;
  std::unordered_map<const onnx::NodeProto*, int> lineOf_;
  int64_t opset_ = 0;
  ir::Graph* graph_ = nullptr;
  Scope* current_ = nullptr;
  std::map<const ir::Value*, std::string> paramNames_;  // main graph parameter -> ONNX input name
  std::set<const ir::Value*> specialised_;
  std::unordered_map<const ir::Value*, runtime::Tensor> known_;
  std::vector<std::string> unsupported_;                     // features, each once
  std::unordered_map<std::string, ShapeValue> shapeValues_;  // ONNX names are unique in a model
  int freshSymbols_ = 0;
};

/// A name from the model as a .graph identifier: characters other than
/// [A-Za-z0-9_.] become '_', and a leading digit gets a '_' before it.
std::string identifier(std::string_view name);

}  // namespace graphc::frontend::onnximport
