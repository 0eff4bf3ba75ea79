#include "ir/Builder.h"

#include <cmath>

#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"

namespace graphc::ir {

Node* insertNode(Region& r, size_t pos, OpId op, std::vector<Value*> operands, AttrMap attrs,
                 const std::vector<TensorType>& types, const SourceLoc& loc) {
  Node* n = r.insert(pos, std::make_unique<Node>(op, std::move(operands), std::move(attrs), loc));
  for (const TensorType& t : types) n->addResult(t, {}, loc);
  return n;
}

Attribute shapeAttribute(const Shape& shape) {
  std::vector<Attribute> items;
  for (const Dim& d : shape)
    items.push_back(d.isStatic() ? Attribute::ofInt(d.size) : Attribute::ofSymbol(toString(d)));
  return Attribute::ofList(std::move(items));
}

Attribute scalarAttribute(DType dtype, double value) {
  if (isFloat(dtype)) return Attribute::ofFloat(value);
  if (dtype == DType::Bool) return Attribute::ofBool(value != 0);
  // Saturating: a double at or past ±2^63 (INT64_MAX as a double is 2^63)
  // is the int64 extreme, NaN is 0; a plain cast would be undefined.
  if (std::isnan(value)) return Attribute::ofInt(0);
  if (value >= 0x1p63) return Attribute::ofInt(INT64_MAX);
  if (value < -0x1p63) return Attribute::ofInt(INT64_MIN);
  return Attribute::ofInt(static_cast<int64_t>(value));
}

Value* insertScalarConstant(Region& r, size_t pos, DType dtype, double value, const SourceLoc& loc) {
  AttrMap attrs;
  attrs.set("value", scalarAttribute(dtype, value));
  return insertNode(r, pos, OpId::Constant, {}, attrs, {TensorType{dtype, {}}}, loc)->result();
}

Value* NodeBuilder::op(OpId op, std::vector<Value*> operands, AttrMap attrs) {
  Node* n = region_.insert(pos_++, std::make_unique<Node>(op, std::move(operands), std::move(attrs), loc_));
  TypeRuleResult types = inferTypes(*n, nullptr);
  if (!types.ok() || types.types.size() != 1)
    throw Error("internal error: a pass built an ill-typed '" + std::string(n->name()) + "': " + types.error);
  return n->addResult(types.types[0], {}, loc_);
}

Value* NodeBuilder::scalar(DType dtype, double value) {
  return insertScalarConstant(region_, pos_++, dtype, value, loc_);
}

namespace {
bool allLeavesEqual(const Attribute& a, const Attribute*& first) {
  if (a.kind == Attribute::Kind::List) {
    for (const Attribute& item : a.list)
      if (!allLeavesEqual(item, first)) return false;
    return true;
  }
  if (!first) first = &a;
  return a.asDouble() == first->asDouble();
}
}  // namespace

std::optional<double> splatValue(const Value* v) {
  const Node* n = v->definingNode();
  if (!n || (n->op != OpId::Constant && n->op != OpId::Full)) return std::nullopt;
  const Attribute& value = *n->attrs.find("value");
  if (value.kind == Attribute::Kind::Dense) {
    if (value.dense->numel() == 0 || !value.dense->isSplat()) return std::nullopt;
    return value.dense->element(0).asDouble();
  }
  const Attribute* first = nullptr;
  if (!allLeavesEqual(value, first) || !first) return std::nullopt;
  return first->asDouble();
}

size_t positionOf(const Node& n) {
  const auto& nodes = n.parentRegion()->nodes();
  for (size_t k = 0; k < nodes.size(); ++k)
    if (nodes[k].get() == &n) return k;
  return nodes.size();
}

}  // namespace graphc::ir
