#include "runtime/reference/Interpreter.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "ir/SizeMath.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::runtime {

using ir::OpId;

namespace {

std::string paramName(const ir::Value& v) { return v.name.empty() ? fmt::format("#{}", v.index()) : "%" + v.name; }

/// A product dim (`4*B`) or a sum (`(P+1)`) against the size an input has:
/// the one symbol of a product still unbound is solved for; a sum is only
/// checked, its symbols bound by other dims.
void bindProduct(const ir::Value& param, const ir::Dim& d, int64_t got, int64_t k, ir::SymbolBindings& bindings,
                 std::unordered_map<std::string, std::string>& boundBy, std::string_view what) {
  int64_t known = d.size;
  std::vector<std::string> unbound;
  for (const std::string& f : d.factors()) {
    std::optional<int64_t> value = ir::factorValue(f, bindings);
    if (!value) {
      unbound.push_back(f);
    } else if (std::optional<int64_t> p = ir::mulSizes(known, *value)) {
      known = *p;
    } else {
      known = -1;  // larger than any size
      break;
    }
  }
  const std::string dim = ir::toString(d);
  if (unbound.empty()) {
    if (known != got)
      throw ir::Error(fmt::format("{} {}: dim {} is {} but {} = {}", what, paramName(param), k, got, dim, known));
    return;
  }
  if (unbound.size() != 1 || unbound[0].front() == '(' || known <= 0 || got % known != 0)
    throw ir::Error(fmt::format("{} {}: dim {} is {}, which {} cannot be", what, paramName(param), k, got, dim));
  bindings[unbound[0]] = got / known;
  boundBy[unbound[0]] = paramName(param);
}

/// Checks one tensor against a parameter type, binding symbols as it goes:
/// a dim that is one symbol binds it (pass 0); a product (`4*B`) is checked
/// once the symbols are bound, binding the one symbol it may still lack
/// (pass 1).
void bindOne(const ir::Value& param, const Tensor& t, ir::SymbolBindings& bindings,
             std::unordered_map<std::string, std::string>& boundBy, std::string_view what, int pass) {
  const ir::TensorType& want = param.type;
  if (t.dtype() != want.dtype)
    throw ir::Error(
        fmt::format("{} {}: expected {}, got {}", what, paramName(param), ir::toString(want), ir::toString(t.type())));
  if (t.rank() != want.rank())
    throw ir::Error(fmt::format("{} {}: expected rank {} ({}), got {}", what, paramName(param), want.rank(),
                                ir::toString(want), ir::toString(t.type())));
  for (int64_t k = 0; k < t.rank(); ++k) {
    const ir::Dim& d = want.shape[k];
    const int64_t got = t.shape()[k];
    if (!d.isStatic() && !d.isSymbol()) {
      if (pass == 1) bindProduct(param, d, got, k, bindings, boundBy, what);
      continue;
    }
    if (pass == 1) continue;
    if (d.isStatic()) {
      if (got != d.size)
        throw ir::Error(fmt::format("{} {}: dim {} must be {}, got {} ({} vs {})", what, paramName(param), k, d.size,
                                    got, ir::toString(want), ir::toString(t.type())));
    } else if (auto [it, fresh] = bindings.emplace(d.symbol, got); !fresh && it->second != got) {
      throw ir::Error(fmt::format("{} {}: dim {} is {} but {} = {} from {}", what, paramName(param), k, got, d.symbol,
                                  it->second, boundBy[d.symbol]));
    } else if (fresh) {
      boundBy[d.symbol] = paramName(param);
    }
  }
}

class Interpreter {
 public:
  Interpreter(ir::SymbolBindings bindings, const NodeObserver& observer, const RunOptions& options)
      : bindings_(std::move(bindings)), observer_(observer), options_(options) {}

  std::vector<Tensor> region(const ir::Region& r, const std::vector<Tensor>& args) {
    std::unordered_map<const ir::Value*, Tensor> env;
    for (size_t k = 0; k < args.size(); ++k) env[r.param(k)] = args[k];
    for (const auto& n : r.nodes()) {
      checkCancelled(options_);
      std::vector<Tensor> operands;
      for (const ir::Value* v : n->operands) operands.push_back(env.at(v));
      std::vector<Tensor> results = node(*n, operands);
      if (observer_) observer_(*n, operands, results);
      for (size_t k = 0; k < results.size(); ++k) env[n->result(k)] = std::move(results[k]);
    }
    std::vector<Tensor> out;
    for (const ir::Value* v : r.returns) out.push_back(env.at(v));
    return out;
  }

 private:
  std::vector<Tensor> node(const ir::Node& n, const std::vector<Tensor>& operands) {
    if (n.op == OpId::Cond) {
      const bool taken = operands[0].getInt(0) != 0;
      return region(*n.regions()[taken ? 0 : 1], {operands.begin() + 1, operands.end()});
    }
    if (n.op == OpId::Fused) return region(*n.regions()[0], operands);
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& v : n.results()) {
      shapes.push_back(concreteShape(ir::substitute(v->type, bindings_)));
      checkedBytes(v->type.dtype, shapes.back());  // before any kernel sizes its scratch by it
    }
    try {
      return evaluateNode(n, operands, shapes);
    } catch (const std::bad_alloc&) {
      std::vector<std::string> types;
      for (const auto& v : n.results()) types.push_back(ir::toString(ir::substitute(v->type, bindings_)));
      throw ir::Error(fmt::format("out of memory evaluating '{}' ({})", n.name(), fmt::join(types, ", ")));
    }
  }

  ir::SymbolBindings bindings_;
  const NodeObserver& observer_;
  const RunOptions& options_;
};

}  // namespace

ir::SymbolBindings bindInputs(const ir::Graph& g, const std::vector<Tensor>& inputs) {
  const auto& params = g.body.params();
  if (inputs.size() != params.size())
    throw ir::Error(fmt::format("@{} takes {} input{}, got {}", g.name, params.size(), params.size() == 1 ? "" : "s",
                                inputs.size()));
  ir::SymbolBindings bindings;
  std::unordered_map<std::string, std::string> boundBy;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < params.size(); ++k) bindOne(*params[k], inputs[k], bindings, boundBy, "input", pass);
  return bindings;
}

std::vector<Tensor> interpret(const ir::Graph& g, const std::vector<Tensor>& inputs, const NodeObserver& observer,
                              const RunOptions& options) {
  return Interpreter(bindInputs(g, inputs), observer, options).region(g.body, inputs);
}

std::vector<Tensor> evaluateNode(const ir::Node& n, const std::vector<Tensor>& operands,
                                 const std::vector<std::vector<int64_t>>& shapes) {
  // Results with no elements need no computing; and the kernels' index
  // arithmetic over the other sizes of an empty tensor (f32[0, 2^40, 2^40])
  // could overflow. A region-carrying op still runs (cond evaluates its
  // predicate in the interpreter, not here).
  if (n.regions().empty() && !shapes.empty() &&
      std::all_of(shapes.begin(), shapes.end(),
                  [](const std::vector<int64_t>& s) { return std::find(s.begin(), s.end(), 0) != s.end(); })) {
    std::vector<Tensor> empty;
    for (size_t k = 0; k < shapes.size(); ++k) empty.emplace_back(n.result(k)->type.dtype, shapes[k]);
    return empty;
  }
  switch (n.info().category) {
    case ir::OpCategory::Unary:
    case ir::OpCategory::Binary:
    case ir::OpCategory::Pointwise: return {reference::pointwise(n, operands, shapes[0])};
    case ir::OpCategory::Reduction:
      if (n.op == OpId::Softmax || n.op == OpId::LogSoftmax) return {reference::softmax(n, operands[0])};
      if (n.op == OpId::Argmax || n.op == OpId::Argmin) return {reference::argReduction(n, operands[0], shapes[0])};
      if (n.op == OpId::Cumsum) return {reference::cumulativeSum(n, operands[0])};
      return {reference::reduction(n, operands[0], shapes[0])};
    case ir::OpCategory::Normalization: return {reference::normalization(n, operands)};
    case ir::OpCategory::Window: return {reference::window(n, operands, shapes[0])};
    case ir::OpCategory::LinAlg:
      if (n.op == OpId::Matmul) return {reference::matmul(operands[0], operands[1], shapes[0])};
      if (n.op == OpId::Linear) return {reference::linear(operands, shapes[0])};
      if (n.op == OpId::GroupedMm) return {reference::groupedMm(n, operands[0], operands[1], operands[2])};
      if (n.op == OpId::SolveTriangular) return {reference::solveTriangular(n, operands[0], operands[1])};
      return reference::eigh(n, operands[0]);
    case ir::OpCategory::Shape: return {reference::shapeOp(n, operands, shapes[0])};
    case ir::OpCategory::Creation: return {reference::creation(n, n.result()->type.dtype, shapes[0])};
    case ir::OpCategory::Control:
    case ir::OpCategory::Fused: break;
  }
  throw ir::Error(fmt::format("reference: '{}' needs its regions run by the interpreter", n.name()));
}

}  // namespace graphc::runtime
