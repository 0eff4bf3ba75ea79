// Numerics of every op × dtype on the reference interpreter against PyTorch
// (tests/golden/make_goldens.py wrote the cases with Debian's python3-torch).
// Outputs are compared with torch's default tolerances; eigenvectors up to
// the sign of each column, which eigh leaves free.
#include <filesystem>

#include <gtest/gtest.h>

#include "GoldenCases.h"
#include "TestUtil.h"
#include "frontend/parser/Parser.h"
#include "passes/PassManager.h"
#include "runtime/Npy.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

class Golden : public ::testing::TestWithParam<std::string> {
 protected:
  void check(bool optimise);
};

TEST_P(Golden, MatchesPyTorch) { check(false); }

// The same cases after the default pipeline (decomposition, fusion, ...):
// what the backends will run must still be what PyTorch computes.
TEST_P(Golden, MatchesPyTorchAfterDefaultPipeline) { check(true); }

void Golden::check(bool optimise) {
  const std::string name = GetParam();
  ir::DiagnosticEngine diags;
  auto source = frontend::readSourceFile((testing::kGoldenCases / (name + ".graph")).string(), diags);
  ASSERT_TRUE(source);
  auto m = frontend::parse(source, diags);
  ASSERT_TRUE(m);
  if (optimise) {
    passes::PassManager pm;
    passes::addDefaultPipeline(pm);
    ASSERT_TRUE(pm.run(*m, diags));
  }
  const ir::Graph& g = *m->entry();
  std::vector<runtime::Tensor> inputs;
  for (size_t k = 0; k < g.body.params().size(); ++k)
    inputs.push_back(runtime::readNpy((testing::kGoldenCases / (name + ".in" + std::to_string(k) + ".npy")).string()));
  std::vector<runtime::Tensor> outputs = runtime::interpret(g, inputs);
  ASSERT_EQ(outputs.size(), g.resultTypes.size());
  const bool isEigh = name.rfind("eigh", 0) == 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    runtime::Tensor expected =
        runtime::readNpy((testing::kGoldenCases / (name + ".out" + std::to_string(k) + ".npy")).string());
    runtime::Tensor actual = isEigh && k == 1 ? testing::alignColumns(outputs[k], expected) : outputs[k];
    testing::Tolerance tol = testing::defaultTolerance(expected.dtype());
    if (isEigh) tol = {tol.rtol * 10, tol.atol * 10};  // LAPACK builds differ in the last bits
    EXPECT_TRUE(testing::allClose(actual, expected, tol)) << name << " output " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(OpsByDType, Golden, ::testing::ValuesIn(testing::goldenCaseNames()),
                         [](const auto& info) { return info.param; });

TEST(GoldenCoverage, EveryOpAndDTypeHasACase) {
  // Each op of the table appears in some case, so a new op without a golden fails here.
  std::set<std::string> seen;
  for (const std::string& name : testing::goldenCaseNames()) {
    ir::DiagnosticEngine diags;
    auto m =
        frontend::parse(frontend::readSourceFile((testing::kGoldenCases / (name + ".graph")).string(), diags), diags);
    ASSERT_TRUE(m) << name;
    std::function<void(const ir::Region&)> walk = [&](const ir::Region& r) {
      for (const auto& n : r.nodes()) {
        seen.insert(std::string(n->name()));
        for (const auto& region : n->regions()) walk(*region);
      }
    };
    walk(m->entry()->body);
  }
  for (const ir::OpInfo& op : ir::allOps())
    if (op.id != ir::OpId::Fused) {
      EXPECT_TRUE(seen.count(std::string(op.name))) << "no golden case uses " << op.name;
    }
}

}  // namespace
}  // namespace graphc
