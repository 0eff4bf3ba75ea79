// ONNX If → graphc cond. ONNX branches are subgraphs that read outer
// values by name; graphc's regions are isolated, so every outer value a
// branch reads (in either branch, or in a subgraph inside one) becomes an
// operand of the cond and a parameter of both regions. Small outer values
// known at import time are copied into the branches instead, so that ops
// inside them that need known operands (a Reshape's shape) see them.
// An If whose condition is known at import time is the taken branch,
// imported in place (ONNX lets such branches differ in type).
#include <fmt/format.h>

#include "frontend/onnx/Importer.h"
#include "ir/Builder.h"
#include "runtime/reference/Constants.h"

namespace graphc::frontend::onnximport {

namespace {

/// Outer values of at most this many elements that are known at import
/// time are copied into the branches rather than passed in.
constexpr int64_t kCopiedConstantLimit = 64;

void convertIf(NodeContext& c) {
  Importer& importer = c.importer;
  ir::Value* pred = c.required(0);
  if (pred->type.dtype != ir::DType::Bool)
    c.fail(fmt::format("the condition must be bool, it is {}", ir::toString(pred->type)));
  if (pred->type.rank() > 0) {
    if (pred->type.staticNumElements() != 1)
      c.fail(fmt::format("the condition must hold one element, it is {}", ir::toString(pred->type)));
    pred = c.op(ir::OpId::Reshape, {pred}, oneAttr("shape", ir::Attribute::ofList({})));
  }
  const onnx::GraphProto& thenGraph = c.graphAttr("then_branch");
  const onnx::GraphProto& elseGraph = c.graphAttr("else_branch");

  if (std::optional<runtime::Tensor> known = importer.knownValue(pred)) {
    const onnx::GraphProto& taken = known->getInt(0) ? thenGraph : elseGraph;
    Scope inlined{&c.region, &importer.currentScope(), {}, {}};
    std::vector<ir::Value*> outputs = importer.importBody(taken, inlined);
    if (outputs.size() != c.numOutputs())
      c.fail(fmt::format("the taken branch returns {} values for {} outputs", outputs.size(), c.numOutputs()));
    for (size_t k = 0; k < outputs.size(); ++k) c.setOutput(k, outputs[k]);
    return;
  }

  auto node = std::make_unique<ir::Node>(ir::OpId::Cond, std::vector<ir::Value*>{pred}, ir::AttrMap{}, c.loc);
  ir::Region& thenRegion = node->addRegion("then");
  ir::Region& elseRegion = node->addRegion("else");
  Scope thenScope{&thenRegion, nullptr, {}, {}};
  Scope elseScope{&elseRegion, nullptr, {}, {}};
  std::vector<std::string> names = Importer::outerNames(thenGraph);
  for (const std::string& name : Importer::outerNames(elseGraph))
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  for (const std::string& name : names) {
    if (importer.shapeValue(name)) continue;  // no IR value: the branches read it directly
    ir::Value* outer = importer.lookup(name);
    std::optional<runtime::Tensor> value;
    if (outer->type.staticNumElements().value_or(kCopiedConstantLimit + 1) <= kCopiedConstantLimit)
      value = importer.knownValue(outer);
    for (auto [region, scope] : {std::pair{&thenRegion, &thenScope}, std::pair{&elseRegion, &elseScope}}) {
      if (value) {
        ir::Value* copy = runtime::insertConstant(*region, region->nodes().size(), *value, c.loc);
        copy->name = outer->name;
        scope->values[name] = copy;
      } else {
        scope->values[name] = region->addParam(outer->type, outer->name, c.loc);
      }
    }
    if (!value) node->operands.push_back(outer);
  }
  thenRegion.returns = importer.importBody(thenGraph, thenScope);
  elseRegion.returns = importer.importBody(elseGraph, elseScope);
  thenRegion.returnLoc = elseRegion.returnLoc = c.loc;
  ir::TypeRuleResult types = ir::inferTypes(*node, nullptr);
  if (!types.ok()) c.fail(types.error);
  if (types.types.size() != c.numOutputs())
    c.fail(fmt::format("the branches return {} values for {} outputs", types.types.size(), c.numOutputs()));
  ir::Node* cond = c.region.append(std::move(node));
  for (size_t k = 0; k < types.types.size(); ++k) c.setOutput(k, cond->addResult(types.types[k], {}, c.loc));
}

const OpMapping kOps[] = {
    {"If", convertIf, {"then_branch", "else_branch"}},
};

}  // namespace

std::span<const OpMapping> controlOps() { return kOps; }

}  // namespace graphc::frontend::onnximport
