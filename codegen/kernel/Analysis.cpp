// Analyses of kernels that both code generators and the executables share.
#include "codegen/kernel/Analysis.h"

#include <set>
#include <unordered_set>

namespace graphc::codegen::kernel {

using namespace ir;

std::vector<const Node*> fusedOps(const Region& r) {
  std::vector<const Node*> out;
  for (const auto& n : r.nodes()) {
    if (n->op == OpId::Fused) {
      out.push_back(n.get());
      continue;
    }
    for (const auto& inner : n->regions())
      for (const Node* f : fusedOps(*inner)) out.push_back(f);
  }
  return out;
}

namespace {

void collectSymbols(const ExprPtr& e, std::set<std::string>& out, std::unordered_set<const Expr*>& seen);

void collectSymbols(const IndexPtr& e, std::set<std::string>& out) {
  if (!e) return;
  if (e->kind == Index::Kind::Sym) out.insert(e->symbol);
  if (e->kind == Index::Kind::Indirect) {
    std::unordered_set<const Expr*> seen;
    collectSymbols(e->load, out, seen);
  }
  collectSymbols(e->lhs, out);
  collectSymbols(e->rhs, out);
}

void collectSymbols(const ExprPtr& e, std::set<std::string>& out, std::unordered_set<const Expr*>& seen) {
  if (!seen.insert(e.get()).second) return;
  for (const IndexPtr& i : e->index) collectSymbols(i, out);
  for (const IndexPtr& i : e->bounds) collectSymbols(i, out);
  for (const ExprPtr& a : e->args) collectSymbols(a, out, seen);
}

void collectSymbols(const Shape& s, std::set<std::string>& out) {
  for (const Dim& d : s)
    for (const std::string& f : d.factors()) out.insert(f);
}

}  // namespace

std::vector<std::string> symbolsOf(const Kernel& k) {
  std::set<std::string> symbols;
  for (const Buffer& b : k.inputs) collectSymbols(b.type.shape, symbols);
  for (const Buffer& b : k.outputs) collectSymbols(b.type.shape, symbols);
  collectSymbols(k.outer, symbols);
  collectSymbols(k.reduceSizes, symbols);
  if (k.gemm) collectSymbols(k.gemm->k, symbols);
  std::unordered_set<const Expr*> seen;
  for (const Store& s : k.stores) {
    for (const IndexPtr& i : s.index) collectSymbols(i, symbols);
    collectSymbols(s.value, symbols, seen);
  }
  return {symbols.begin(), symbols.end()};
}

std::optional<OpId> storedExtremum(const Kernel& k) {
  std::vector<const Expr*> stack;
  std::unordered_set<const Expr*> seen;
  for (const Store& s : k.stores)
    if (!s.insideReduction) stack.push_back(s.value.get());
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (!seen.insert(e).second) continue;
    if (e->kind == Expr::Kind::Reduce && (e->op == OpId::Amax || e->op == OpId::Amin)) return e->op;
    for (const ExprPtr& a : e->args) stack.push_back(a.get());
  }
  return std::nullopt;
}

std::vector<const Expr*> reductionOrder(const Kernel& k) {
  std::vector<const Expr*> order;
  std::unordered_set<const Expr*> seen;
  // Post-order: a reduction after the reductions its argument reads.
  auto visit = [&](auto& self, const Expr* e) -> void {
    if (!seen.insert(e).second) return;
    for (const ExprPtr& a : e->args) self(self, a.get());
    if (e->kind == Expr::Kind::Reduce) order.push_back(e);
  };
  for (const Store& s : k.stores) visit(visit, s.value.get());
  return order;
}

}  // namespace graphc::codegen::kernel
