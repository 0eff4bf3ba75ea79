// Graph::withConstants, withDynamicDims and withStaticDims: the edits a
// caller makes to a loaded graph before compiling it — bind the weights
// (freeze), unpin a static size, pin a symbolic one. Each works on a clone;
// the Graph stays immutable.
#include <algorithm>
#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "frontend/api/Api.h"
#include "ir/Verifier.h"
#include "passes/Passes.h"
#include "runtime/reference/Constants.h"

namespace graphc {

namespace {

/// The position of the entry graph's parameter `name`; throws if none.
size_t paramIndex(const ir::Graph& g, const std::string& name) {
  const auto& params = g.body.params();
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k]->name == name) return k;
  throw Error(fmt::format("graph @{} has no parameter %{}", g.name, name));
}

bool fits(const ir::TensorType& param, const Tensor& value) {
  if (param.dtype != value.dtype() || param.rank() != value.rank()) return false;
  for (int64_t d = 0; d < param.rank(); ++d)
    if (!param.shape[d].isStatic(value.shape()[d])) return false;
  return true;
}

/// Every type of `g` inferred again from its parameters' (the declared
/// result types follow them).
void reinferTypes(ir::Graph& g) {
  ir::DiagnosticEngine diags;
  passes::InferTypesPass infer;
  if (infer.run(g, diags).failed) throw CompileError(diags.all());
  g.resultTypes.clear();
  for (const ir::Value* v : g.body.returns) g.resultTypes.push_back(v->type);
}

}  // namespace

Graph Graph::withConstants(const std::map<std::string, Tensor>& values) const {
  auto module = ir::clone(*module_);
  ir::Graph& g = *module->entry();
  size_t inserted = 0;
  for (const auto& [name, value] : values) {
    const size_t k = paramIndex(g, name);
    ir::Value* param = g.body.param(k);
    if (g.updatingResult(param) >= 0)
      throw Error(fmt::format("parameter %{} is updated in place by result {}: it cannot become a constant", name,
                              g.updatingResult(param)));
    if (!fits(param->type, value))
      throw Error(fmt::format("parameter %{} is {}; the constant given for it is {}", name, ir::toString(param->type),
                              ir::toString(value.type())));
    // A copy: insertConstant's dense form shares the tensor's storage.
    Tensor copy(value.dtype(), value.shape());
    if (value.nbytes()) std::memcpy(copy.data(), value.data(), value.nbytes());
    ir::Value* result = runtime::insertConstant(g.body, inserted++, copy, param->loc);
    result->name = param->name;
    g.body.replaceAllUses(param, result);
    g.body.removeParam(k);
  }
  return Graph(std::move(module));
}

Graph Graph::withDynamicDims(const std::map<std::string, std::map<int64_t, std::string>>& dims) const {
  auto module = ir::clone(*module_);
  ir::Graph& g = *module->entry();
  for (const auto& [name, marks] : dims) {
    ir::Value* param = g.body.param(paramIndex(g, name));
    for (const auto& [dim, symbol] : marks) {
      const int64_t rank = param->type.rank();
      if (dim < -rank || dim >= rank) throw Error(fmt::format("parameter %{} has rank {}: no dim {}", name, rank, dim));
      if (symbol.empty() || !(std::isalpha(static_cast<unsigned char>(symbol[0])) || symbol[0] == '_'))
        throw Error(fmt::format("'{}' is not a symbol name (a letter or '_', then letters, digits, '_')", symbol));
      for (char c : symbol)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
          throw Error(fmt::format("'{}' is not a symbol name (a letter or '_', then letters, digits, '_')", symbol));
      param->type.shape[dim < 0 ? dim + rank : dim] = ir::Dim::sym(symbol);
    }
  }
  reinferTypes(g);
  return Graph(std::move(module));
}

Graph Graph::withStaticDims(const std::map<std::string, int64_t>& sizes) const {
  auto module = ir::clone(*module_);
  ir::Graph& g = *module->entry();
  for (const auto& [symbol, size] : sizes) {
    bool found = false;
    for (const auto& p : g.body.params())
      for (const ir::Dim& d : p->type.shape)
        for (const std::string& s : ir::symbolsOf(d)) found = found || s == symbol;
    if (!found) throw Error(fmt::format("graph @{} has no symbolic size {}", g.name, symbol));
    if (size < 0) throw Error(fmt::format("{} = {}: a size cannot be negative", symbol, size));
  }
  for (const auto& p : g.body.params()) p->type = ir::substitute(p->type, sizes);
  reinferTypes(g);
  return Graph(std::move(module));
}

Graph Graph::withInputUpdates(const std::map<size_t, std::string>& updates) const {
  auto module = ir::clone(*module_);
  ir::Graph& g = *module->entry();
  for (const auto& [result, name] : updates) {
    if (result >= g.resultTypes.size())
      throw Error(fmt::format("graph @{} has {} results: no result {}", g.name, g.resultTypes.size(), result));
    ir::Value* param = g.body.param(paramIndex(g, name));
    std::erase_if(g.inputUpdates, [&](const ir::InputUpdate& u) { return u.result == result; });
    g.inputUpdates.push_back({result, param, {}});
  }
  std::sort(g.inputUpdates.begin(), g.inputUpdates.end(),
            [](const ir::InputUpdate& a, const ir::InputUpdate& b) { return a.result < b.result; });
  ir::DiagnosticEngine diags;
  if (!ir::verify(*module, diags)) throw CompileError(diags.all());
  return Graph(std::move(module));
}

}  // namespace graphc
