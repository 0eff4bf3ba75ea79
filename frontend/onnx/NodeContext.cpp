// NodeContext: what a converter sees of the node it converts, and how it
// builds ops; plus the registry of converters, gathered from the op-family
// tables.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "frontend/onnx/Importer.h"
#include "ir/Builder.h"
#include "ir/SizeMath.h"
#include "runtime/reference/Constants.h"

namespace graphc::frontend::onnximport {

bool ShapeValue::isStatic() const {
  return std::all_of(dims.begin(), dims.end(), [](const ir::Dim& d) { return d.isStatic(); });
}

NodeContext::NodeContext(Importer& importer, const onnx::NodeProto& node, ir::Region& region, ir::SourceLoc loc,
                         std::vector<ir::Value*> inputs, std::vector<const ShapeValue*> shapeInputs, int64_t opset)
    : importer(importer),
      node(node),
      region(region),
      loc(std::move(loc)),
      opset(opset),
      inputs_(std::move(inputs)),
      shapeInputs_(std::move(shapeInputs)) {
  shapeInputs_.resize(inputs_.size(), nullptr);
}

ir::Value* NodeContext::input(size_t k) {
  if (isShape(k) && !inputs_[k]) inputs_[k] = materialize(*shapeInputs_[k]);
  return k < inputs_.size() ? inputs_[k] : nullptr;
}

ir::Value* NodeContext::sizeValue(const ir::Dim& size, ir::DType dtype) {
  ir::Node* ones = ir::insertNode(region, region.nodes().size(), ir::OpId::Full, {},
                                  oneAttr("value", ir::Attribute::ofInt(1)), {{dtype, {size}}}, loc);
  return cast(op(ir::OpId::Sum, {ones->result()}), dtype);  // integers sum to i64
}

ir::Value* NodeContext::materialize(const ShapeValue& v) {
  std::vector<ir::Value*> parts;
  for (const ir::Dim& d : v.dims) {
    ir::Value* size = d.isStatic() ? scalar(v.dtype, static_cast<double>(d.size)) : sizeValue(d, v.dtype);
    parts.push_back(op(ir::OpId::Unsqueeze, {size}, oneAttr("dim", ir::Attribute::ofInt(0))));
  }
  if (parts.empty()) return constantOf(runtime::Tensor(v.dtype, {0}));
  ir::Value* out = parts.size() == 1 ? parts[0] : op(ir::OpId::Concat, parts, oneAttr("dim", ir::Attribute::ofInt(0)));
  return v.scalar ? op(ir::OpId::Squeeze, {out}, oneAttr("dim", ir::Attribute::ofInt(0))) : out;
}

ShapeValue NodeContext::shapeInput(size_t k, std::string_view what) const {
  if (isShape(k)) return *shapeInputs_[k];
  runtime::Tensor t = requireConstant(k, what);
  if (!ir::isInteger(t.dtype()) || t.rank() > 1)
    fail(fmt::format("{} must be integers of rank 0 or 1, it is {}", what, ir::toString(t.type())));
  ShapeValue v;
  v.scalar = t.rank() == 0;
  for (int64_t i = 0; i < t.numel(); ++i) v.dims.push_back(ir::Dim::of(t.getInt(i)));
  return v;
}

void NodeContext::setShapeOutput(size_t k, const ShapeValue& v) {
  if (!outputWanted(k)) return;
  if (!v.isStatic()) {
    importer.defineShape(node.output(static_cast<int>(k)), v);
    return;
  }
  runtime::Tensor t(v.dtype,
                    v.scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(v.dims.size())});
  for (size_t i = 0; i < v.dims.size(); ++i) t.setInt(static_cast<int64_t>(i), v.dims[i].size);
  setOutput(k, constantOf(t));
}

void NodeContext::fail(const std::string& message) const {
  throw ir::Error(fmt::format("'{}': {}", node.op_type(), message));
}

void NodeContext::unsupported(const std::string& feature, const std::string& message) const {
  throw Unsupported(fmt::format("{} {}", node.op_type(), feature), fmt::format("'{}': {}", node.op_type(), message));
}

ir::Value* NodeContext::required(size_t k) {
  if (!present(k)) fail(fmt::format("input {} is required", k));
  return input(k);
}

std::optional<runtime::Tensor> NodeContext::constant(size_t k) const {
  if (isShape(k)) return std::nullopt;
  ir::Value* v = k < inputs_.size() ? inputs_[k] : nullptr;
  if (!v) return std::nullopt;
  if (ir::Value* c = importer.specialise(v)) inputs_[k] = v = c;
  return importer.knownValue(v, /*specialiseInputs=*/true);
}

runtime::Tensor NodeContext::requireConstant(size_t k, std::string_view what) const {
  if (auto t = constant(k)) return *t;
  const std::string name = k < static_cast<size_t>(node.input_size()) ? node.input(static_cast<int>(k)) : "";
  // The hint names the graph inputs it comes from: only those can be given.
  std::vector<std::string> inputs =
      k < inputs_.size() && inputs_[k] ? importer.inputsBehind(inputs_[k]) : std::vector<std::string>{};
  if (inputs.empty())
    fail(
        fmt::format("{} ('{}') must be known when the graph is built: an initializer, a Constant, or computed "
                    "from them",
                    what, name));
  for (std::string& i : inputs) i = fmt::format("--input {}=FILE", i);
  fail(
      fmt::format("{} ('{}') must be known when the graph is built: it is computed from graph input{} that can be "
                  "given a value ({})",
                  what, name, inputs.size() == 1 ? "" : "s", fmt::join(inputs, " ")));
}

std::vector<int64_t> NodeContext::constantInts(size_t k, std::string_view what) const {
  runtime::Tensor t = requireConstant(k, what);
  if (!ir::isInteger(t.dtype())) fail(fmt::format("{} must be integers, it is {}", what, ir::toString(t.type())));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.getInt(i));
  return out;
}

const onnx::AttributeProto* NodeContext::attr(std::string_view attrName) const {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == attrName) return &a;
  return nullptr;
}

int64_t NodeContext::intAttr(std::string_view attrName, int64_t fallback) const {
  const onnx::AttributeProto* a = attr(attrName);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT) fail(fmt::format("attribute '{}' must be an int", attrName));
  return a->i();
}

float NodeContext::floatAttr(std::string_view attrName, float fallback) const {
  const onnx::AttributeProto* a = attr(attrName);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) fail(fmt::format("attribute '{}' must be a float", attrName));
  return a->f();
}

std::string NodeContext::stringAttr(std::string_view attrName, std::string fallback) const {
  const onnx::AttributeProto* a = attr(attrName);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) fail(fmt::format("attribute '{}' must be a string", attrName));
  return a->s();
}

std::optional<std::vector<int64_t>> NodeContext::intsAttr(std::string_view attrName) const {
  const onnx::AttributeProto* a = attr(attrName);
  if (!a) return std::nullopt;
  if (a->type() != onnx::AttributeProto::INTS) fail(fmt::format("attribute '{}' must be a list of ints", attrName));
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<runtime::Tensor> NodeContext::tensorAttr(std::string_view attrName) const {
  const onnx::AttributeProto* a = attr(attrName);
  if (!a) return std::nullopt;
  if (a->type() != onnx::AttributeProto::TENSOR) fail(fmt::format("attribute '{}' must be a tensor", attrName));
  return tensorFromProto(a->t(), fmt::format("'{}' attribute '{}'", node.op_type(), attrName),
                         &importer.externalData());
}

const onnx::GraphProto& NodeContext::graphAttr(std::string_view attrName) const {
  const onnx::AttributeProto* a = attr(attrName);
  if (!a || a->type() != onnx::AttributeProto::GRAPH)
    fail(fmt::format("attribute '{}' (a graph) is required", attrName));
  return a->g();
}

ir::Value* NodeContext::op(ir::OpId op, std::vector<ir::Value*> operands, ir::AttrMap attrs) {
  auto n = std::make_unique<ir::Node>(op, std::move(operands), std::move(attrs), loc);
  ir::TypeRuleResult types = ir::inferTypes(*n, nullptr);
  if (!types.ok()) fail(types.error);
  if (types.types.size() != 1) fail(fmt::format("'{}' has {} results", n->name(), types.types.size()));
  ir::Node* added = region.append(std::move(n));
  return added->addResult(types.types[0], {}, loc);
}

ir::Value* NodeContext::cast(ir::Value* v, ir::DType t) {
  return v->type.dtype == t ? v : op(ir::OpId::Cast, {v}, oneAttr("dtype", ir::Attribute::ofDType(t)));
}

ir::Value* NodeContext::withTrailingOnes(ir::Value* v, int64_t count) {
  for (int64_t k = 0; k < count; ++k) v = op(ir::OpId::Unsqueeze, {v}, oneAttr("dim", ir::Attribute::ofInt(-1)));
  return v;
}

ir::Value* NodeContext::constantOf(const runtime::Tensor& value) {
  return runtime::insertConstant(region, region.nodes().size(), value, loc);
}

ir::Value* NodeContext::scalar(ir::DType dtype, double value) {
  return ir::insertScalarConstant(region, region.nodes().size(), dtype, value, loc);
}

bool NodeContext::outputWanted(size_t k) const { return k < numOutputs() && !node.output(static_cast<int>(k)).empty(); }

void NodeContext::setOutput(size_t k, ir::Value* v) {
  if (outputWanted(k)) importer.define(node.output(static_cast<int>(k)), v);
}

// ---- shared helpers -----------------------------------------------------------

ir::AttrMap oneAttr(std::string_view name, ir::Attribute value) {
  ir::AttrMap a;
  a.set(std::string(name), std::move(value));
  return a;
}

ir::Value* reshape(NodeContext& c, ir::Value* x, const ir::Shape& shape) {
  if (x->type.shape == shape) return x;
  return c.op(ir::OpId::Reshape, {x}, oneAttr("shape", ir::shapeAttribute(shape)));
}

ir::AttrMap reduceAttrs(const std::vector<int64_t>& dims, bool keepdim) {
  ir::AttrMap a;
  a.set("dims", ir::Attribute::ofInts(dims));
  a.set("keepdim", ir::Attribute::ofBool(keepdim));
  return a;
}

int64_t normalizeAxis(const NodeContext& c, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) c.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return a;
}

int64_t checkedMul(const NodeContext& c, int64_t a, int64_t b) {
  std::optional<int64_t> r = ir::mulSizes(a, b);
  if (!r) c.fail(fmt::format("the size {} x {} overflows", a, b));
  return *r;
}

int64_t checkedAdd(const NodeContext& c, int64_t a, int64_t b) {
  std::optional<int64_t> r = ir::addSizes(a, b);
  if (!r) c.fail(fmt::format("the size {} + {} overflows", a, b));
  return *r;
}

void needFloat(const NodeContext& c, const ir::Value* v) {
  if (!ir::isFloat(v->type.dtype))
    c.unsupported(fmt::format("on {}", ir::dtypeName(v->type.dtype)),
                  fmt::format("graphc computes it on floating-point tensors only, got {}", ir::toString(v->type)));
}

// ---- the registry -------------------------------------------------------------

const OpMapping* findOp(std::string_view opType) {
  static const std::unordered_map<std::string_view, const OpMapping*> table = [] {
    std::unordered_map<std::string_view, const OpMapping*> t;
    for (auto family : {elementwiseOps(), reductionOps(), shapeOps(), nnOps(), windowOps(), controlOps(), einsumOps()})
      for (const OpMapping& m : family) t.emplace(m.opType, &m);
    return t;
  }();
  auto it = table.find(opType);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace graphc::frontend::onnximport
