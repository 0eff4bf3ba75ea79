#include "codegen/kernel/Substitute.h"

namespace graphc::codegen::kernel {

IndexPtr VarSubstitution::index(const IndexPtr& e) {
  if (auto it = indices_.find(e.get()); it != indices_.end()) return it->second;
  IndexPtr r = e;
  switch (e->kind) {
    case Index::Kind::Const:
    case Index::Kind::Sym: break;
    case Index::Kind::Var:
      if (auto it = replace_.find(e->value); it != replace_.end()) r = it->second;
      break;
    case Index::Kind::Add: r = add(index(e->lhs), index(e->rhs)); break;
    case Index::Kind::Mul: r = mul(index(e->lhs), index(e->rhs)); break;
    case Index::Kind::Div: r = div(index(e->lhs), index(e->rhs)); break;
    case Index::Kind::Mod: r = mod(index(e->lhs), index(e->rhs)); break;
    case Index::Kind::Clamp: r = clamp(index(e->lhs), index(e->rhs)); break;
    case Index::Kind::Indirect: {
      auto rebuilt = std::make_shared<Index>(*e);
      rebuilt->load = expr(e->load);
      r = rebuilt;
      break;
    }
  }
  return indices_[e.get()] = r;
}

ExprPtr VarSubstitution::expr(const ExprPtr& e) {
  if (auto it = exprs_.find(e.get()); it != exprs_.end()) return it->second;
  auto rebuilt = std::make_shared<Expr>(*e);
  for (IndexPtr& i : rebuilt->index) i = index(i);
  for (IndexPtr& i : rebuilt->sizes) i = index(i);
  for (IndexPtr& i : rebuilt->bounds) i = index(i);
  for (ExprPtr& a : rebuilt->args) a = expr(a);
  return exprs_[e.get()] = rebuilt;
}

}  // namespace graphc::codegen::kernel
