#include "passes/RewriteUtils.h"

#include <unordered_set>

#include "runtime/ReferenceOps.h"

namespace graphc::passes {

ir::Node* insertNode(ir::Region& r, size_t pos, ir::OpId op, std::vector<ir::Value*> operands, ir::AttrMap attrs,
                     const std::vector<ir::TensorType>& types, const ir::SourceLoc& loc) {
  ir::Node* n = r.insert(pos, std::make_unique<ir::Node>(op, std::move(operands), std::move(attrs), loc));
  for (const ir::TensorType& t : types) n->addResult(t, {}, loc);
  return n;
}

ir::Attribute shapeAttribute(const ir::Shape& shape) {
  std::vector<ir::Attribute> items;
  for (const ir::Dim& d : shape) items.push_back(d.isStatic() ? ir::Attribute::ofInt(d.size) : ir::Attribute::ofSymbol(d.symbol));
  return ir::Attribute::ofList(std::move(items));
}

ir::Attribute scalarAttribute(ir::DType dtype, double value) {
  if (ir::isFloat(dtype)) return ir::Attribute::ofFloat(value);
  if (dtype == ir::DType::Bool) return ir::Attribute::ofBool(value != 0);
  return ir::Attribute::ofInt(static_cast<int64_t>(value));
}

ir::Value* insertConstant(ir::Region& r, size_t pos, const runtime::Tensor& t, const ir::SourceLoc& loc) {
  const bool empty = t.numel() == 0;
  ir::AttrMap attrs;
  attrs.set("value", empty ? scalarAttribute(t.dtype(), 0) : tensorAttribute(t));
  return insertNode(r, pos, empty ? ir::OpId::Full : ir::OpId::Constant, {}, attrs, {t.type()}, loc)->result();
}

ir::Value* insertScalarConstant(ir::Region& r, size_t pos, ir::DType dtype, double value, const ir::SourceLoc& loc) {
  ir::AttrMap attrs;
  attrs.set("value", scalarAttribute(dtype, value));
  return insertNode(r, pos, ir::OpId::Constant, {}, attrs, {ir::TensorType{dtype, {}}}, loc)->result();
}

ir::Value* NodeBuilder::op(ir::OpId op, std::vector<ir::Value*> operands, ir::AttrMap attrs) {
  ir::Node* n = region_.insert(pos_++, std::make_unique<ir::Node>(op, std::move(operands), std::move(attrs), loc_));
  ir::TypeRuleResult types = ir::inferTypes(*n, nullptr);
  if (!types.ok() || types.types.size() != 1)
    throw ir::Error("internal error: a pass built an ill-typed '" + std::string(n->name()) + "': " + types.error);
  return n->addResult(types.types[0], {}, loc_);
}

ir::Value* NodeBuilder::scalar(ir::DType dtype, double value) {
  return insertScalarConstant(region_, pos_++, dtype, value, loc_);
}

namespace {
bool allLeavesEqual(const ir::Attribute& a, const ir::Attribute*& first) {
  if (a.kind == ir::Attribute::Kind::List) {
    for (const ir::Attribute& item : a.list)
      if (!allLeavesEqual(item, first)) return false;
    return true;
  }
  if (!first) first = &a;
  return a.asDouble() == first->asDouble();
}
}  // namespace

std::optional<double> splatValue(const ir::Value* v) {
  const ir::Node* n = v->definingNode();
  if (!n || (n->op != ir::OpId::Constant && n->op != ir::OpId::Full)) return std::nullopt;
  const ir::Attribute& value = *n->attrs.find("value");
  const ir::Attribute* first = nullptr;
  if (!allLeavesEqual(value, first) || !first) return std::nullopt;
  return first->asDouble();
}

std::optional<runtime::Tensor> constantTensor(const ir::Value* v) {
  const ir::Node* n = v->definingNode();
  if (!n || (n->op != ir::OpId::Constant && n->op != ir::OpId::Full) || !v->type.isStatic()) return std::nullopt;
  return runtime::reference::creation(*n, v->type.dtype, runtime::concreteShape(v->type));
}

namespace {
ir::Attribute element(const runtime::Tensor& t, int64_t i) {
  if (ir::isFloat(t.dtype())) return ir::Attribute::ofFloat(t.getDouble(i));
  if (t.dtype() == ir::DType::Bool) return ir::Attribute::ofBool(t.getInt(i) != 0);
  return ir::Attribute::ofInt(t.getInt(i));
}

ir::Attribute nested(const runtime::Tensor& t, size_t dim, int64_t& next) {
  std::vector<ir::Attribute> items;
  for (int64_t k = 0; k < t.shape()[dim]; ++k)
    items.push_back(dim + 1 == t.shape().size() ? element(t, next++) : nested(t, dim + 1, next));
  return ir::Attribute::ofList(std::move(items));
}
}  // namespace

ir::Attribute tensorAttribute(const runtime::Tensor& t) {
  if (t.rank() == 0) return element(t, 0);
  int64_t next = 0;
  return nested(t, 0, next);
}

bool removeDeadNodes(ir::Region& r) {
  bool changed = false;
  for (const auto& n : r.nodes())
    for (const auto& region : n->regions()) changed |= removeDeadNodes(*region);
  std::unordered_set<const ir::Value*> live(r.returns.begin(), r.returns.end());
  std::unordered_set<const ir::Node*> dead;
  for (auto it = r.nodes().rbegin(); it != r.nodes().rend(); ++it) {
    const ir::Node& n = **it;
    bool used = false;
    for (const auto& v : n.results()) used |= live.count(v.get()) > 0;
    if (!used) {
      dead.insert(&n);
      continue;
    }
    live.insert(n.operands.begin(), n.operands.end());
  }
  if (!dead.empty()) r.removeIf([&](const ir::Node& n) { return dead.count(&n) > 0; });
  return changed || !dead.empty();
}

size_t positionOf(const ir::Node& n) {
  const auto& nodes = n.parentRegion()->nodes();
  for (size_t k = 0; k < nodes.size(); ++k)
    if (nodes[k].get() == &n) return k;
  return nodes.size();
}

}  // namespace graphc::passes
