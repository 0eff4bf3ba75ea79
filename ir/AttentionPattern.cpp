#include "ir/AttentionPattern.h"

#include <algorithm>
#include <limits>

#include "ir/ShapeRules.h"

namespace graphc::ir {

namespace {

const Node* producer(const Value* v, OpId op) {
  const Node* n = v ? v->definingNode() : nullptr;
  return n && n->op == op ? n : nullptr;
}

/// A reduction over the last dim that keeps it.
bool overLastDim(const Node* n) {
  const int64_t rank = n->operands[0]->type.rank();
  const Attribute* keep = n->attrs.find("keepdim");
  return rules::reducedAxes(n->attrs, rank) == std::vector<int64_t>{rank - 1} && keep && keep->b;
}

/// Whether `v` is a scalar constant 0.
bool isZero(const Value* v) {
  const Node* n = v->definingNode();
  if (!n || (n->op != OpId::Constant && n->op != OpId::Full) || v->type.rank() != 0) return false;
  const Attribute* value = n->attrs.find("value");
  return value && (value->kind == Attribute::Kind::Float || value->kind == Attribute::Kind::Int) &&
         value->asDouble() == 0.0;
}

}  // namespace

/// torch's all(x == −inf) over the last dim, keepdim, as the torch.compile
/// backend spells all(): logical_not(ne(sum(cast(logical_not(eq(x, −inf)))),
/// 0)), the cast optional. Appends its nodes to `nodes` and returns x.
const Value* allMinusInf(const Value* v, std::vector<const Node*>& nodes) {
  const Node* notAny = producer(v, OpId::LogicalNot);
  const Node* any = notAny ? producer(notAny->operands[0], OpId::Ne) : nullptr;
  if (!any || !isZero(any->operands[1])) return nullptr;
  const Node* count = producer(any->operands[0], OpId::Sum);
  if (!count || !overLastDim(count)) return nullptr;
  const Value* counted = count->operands[0];
  const Node* cast = producer(counted, OpId::Cast);
  if (cast) counted = cast->operands[0];
  const Node* unmasked = producer(counted, OpId::LogicalNot);
  const Node* masked = unmasked ? producer(unmasked->operands[0], OpId::Eq) : nullptr;
  if (!masked) return nullptr;
  const Node* minusInf = masked->operands[1]->definingNode();
  const Attribute* value = minusInf && masked->operands[1]->type.rank() == 0 &&
                                   (minusInf->op == OpId::Constant || minusInf->op == OpId::Full)
                               ? minusInf->attrs.find("value")
                               : nullptr;
  if (!value || value->kind != Attribute::Kind::Float || value->f != -std::numeric_limits<double>::infinity())
    return nullptr;
  nodes.insert(nodes.end(), {notAny, any, any->operands[1]->definingNode(), count, unmasked, masked, minusInf});
  if (cast) nodes.push_back(cast);
  return masked->operands[0];
}

std::optional<SoftmaxMatch> matchSoftmax(const Value* p) {
  SoftmaxMatch m;
  const Value* maskedRowsOf = nullptr;  // the all(x == −inf) form: its x
  if (const Node* where = producer(p, OpId::Where)) {
    if (!isZero(where->operands[1])) return std::nullopt;
    m.nodes = {where, where->operands[1]->definingNode()};
    const Node* isNan = producer(where->operands[0], OpId::Ne);
    if (isNan && isNan->operands[0] == isNan->operands[1] && isNan->operands[0] == where->operands[2]) {
      m.nanRowsToZero = true;
      m.nodes.push_back(isNan);
    } else if ((maskedRowsOf = allMinusInf(where->operands[0], m.nodes))) {
      m.minusInfRowsToZero = true;
    } else {
      return std::nullopt;
    }
    p = where->operands[2];
  }
  const Node* div = producer(p, OpId::Div);
  const Node* exp = div ? producer(div->operands[0], OpId::Exp) : nullptr;
  const Node* sum = div ? producer(div->operands[1], OpId::Sum) : nullptr;
  const Node* sub = exp ? producer(exp->operands[0], OpId::Sub) : nullptr;
  const Node* max = sub ? producer(sub->operands[1], OpId::Amax) : nullptr;
  if (!max || !sum || sum->operands[0] != exp->result() || max->operands[0] != sub->operands[0] || !overLastDim(sum) ||
      !overLastDim(max) || sub->operands[0]->type != p->type)
    return std::nullopt;
  m.input = sub->operands[0];
  if (maskedRowsOf && maskedRowsOf != m.input) return std::nullopt;
  m.nodes.insert(m.nodes.end(), {div, exp, sum, sub, max});
  return m;
}

bool regroupsBatchDims(const Node& n) {
  if (n.op != OpId::Reshape) return false;
  const Shape& in = n.operands[0]->type.shape;
  const Shape& out = n.result()->type.shape;
  return in.size() >= 2 && out.size() >= 2 && in.back() == out.back() && in[in.size() - 2] == out[out.size() - 2];
}

namespace {

bool isParam(const Region& r, const Value* v) {
  return std::find_if(r.params().begin(), r.params().end(), [&](const auto& p) { return p.get() == v; }) !=
         r.params().end();
}

bool isF32(const Value* v) { return v->type.dtype == DType::F32; }

}  // namespace

std::optional<AttentionMatch> matchAttention(const Region& body) {
  AttentionMatch m;
  m.values = body.returns.size() == 1 ? producer(body.returns[0], OpId::Matmul) : nullptr;
  if (!m.values) return std::nullopt;
  std::optional<SoftmaxMatch> softmax = matchSoftmax(m.values->operands[0]);
  if (!softmax) return std::nullopt;
  m.softmax = std::move(*softmax);
  const Shape& x = m.softmax.input->type.shape;
  for (const auto& n : body.nodes())
    if (n->op == OpId::Matmul && n.get() != m.values) {
      if (m.scores) return std::nullopt;
      m.scores = n.get();
    }
  if (!m.scores) return std::nullopt;
  const Shape& scores = m.scores->result()->type.shape;
  const Shape& out = m.values->result()->type.shape;
  const Value* v = m.values->operands[1];
  // The scores hold x's elements in its order: the same shape, or its
  // batch dims regrouped (static, so that the element counts compare).
  const std::optional<int64_t> xCount = TensorType{DType::F32, x}.staticNumElements();
  const bool sameOrder =
      scores == x || (xCount && xCount == m.scores->result()->type.staticNumElements() && scores.size() >= 2 &&
                      x.size() >= 2 && scores.back() == x.back() && scores[scores.size() - 2] == x[x.size() - 2]);
  if (!sameOrder || x.size() < 2 || out.size() != x.size() || !std::equal(x.begin(), x.end() - 1, out.begin()) ||
      !isF32(m.scores->result()) || !isF32(m.softmax.input) || !isF32(v) || !isF32(m.values->result()) ||
      !isParam(body, v) || v->type.rank() < 2)
    return std::nullopt;
  for (const Value* operand : m.scores->operands)
    if (!isParam(body, operand) || operand->type.rank() < 2) return std::nullopt;
  for (const auto& n : body.nodes()) {
    if (n.get() == m.scores || n.get() == m.values ||
        std::find(m.softmax.nodes.begin(), m.softmax.nodes.end(), n.get()) != m.softmax.nodes.end())
      continue;
    const bool scalar = (n->op == OpId::Constant || n->op == OpId::Full) && n->result()->type.rank() == 0;
    const bool pointwise = n->info().isPointwise() && n->results().size() == 1 &&
                           (n->result()->type.shape == x || n->result()->type.shape == scores);
    const bool regroup = regroupsBatchDims(*n) && n->result()->type.shape == x;
    if (!scalar && !pointwise && !regroup) return std::nullopt;
  }
  return m;
}

}  // namespace graphc::ir
