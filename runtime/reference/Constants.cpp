#include "runtime/reference/Constants.h"

#include "ir/Builder.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime {

ir::Value* insertConstant(ir::Region& r, size_t pos, const runtime::Tensor& t, const ir::SourceLoc& loc) {
  const bool empty = t.numel() == 0;
  ir::AttrMap attrs;
  // Up to 16 elements a nested list, which dumps show as numbers; weights
  // as dense bytes.
  constexpr int64_t kListElements = 16;
  attrs.set("value", empty ? ir::scalarAttribute(t.dtype(), 0)
                           : (t.numel() <= kListElements ? tensorAttribute(t) : denseAttribute(t)));
  return ir::insertNode(r, pos, empty ? ir::OpId::Full : ir::OpId::Constant, {}, attrs, {t.type()}, loc)->result();
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

ir::Attribute denseAttribute(const Tensor& t) {
  return ir::Attribute::ofDense(t.dtype(), t.shape(), t.storageOwner(), t.data(), t.nbytes());
}

ir::Attribute tensorAttribute(const runtime::Tensor& t) {
  if (t.rank() == 0) return element(t, 0);
  int64_t next = 0;
  return nested(t, 0, next);
}

}  // namespace graphc::runtime
