// Kernel counts after the default pipeline (tinygrad's check_schedule
// habit), and the results of the fused graphs against the unfused ones.
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "passes/PassManager.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

struct Kernel {
  std::string kind, name;
  size_t results;
};

/// The fused ops of a graph after the default pipeline, in program order.
std::vector<Kernel> kernelsAfterPipeline(ir::Module& m) {
  ir::DiagnosticEngine diags;
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  EXPECT_TRUE(pm.run(m, diags));
  std::vector<Kernel> out;
  for (const ir::Node* n : codegen::kernel::fusedOps(m.entry()->body))
    out.push_back({n->attrs.find("kind")->s, n->attrs.find("name")->s, n->numResults()});
  return out;
}

/// Runs `text` before and after the pipeline on the same random inputs.
void expectSameResults(const std::string& text, const ir::SymbolBindings& sizes) {
  auto before = testing::parseOk(text);
  ASSERT_TRUE(before);
  auto after = ir::clone(*before);
  kernelsAfterPipeline(*after);
  std::vector<runtime::Tensor> inputs;
  for (const auto& p : before->entry()->body.params()) {
    ir::TensorType t = ir::substitute(p->type, sizes);
    inputs.push_back(runtime::randomTensor(t.dtype, runtime::concreteShape(t), 100 + p->index()));
  }
  auto want = runtime::interpret(*before->entry(), inputs);
  auto got = runtime::interpret(*after->entry(), inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_TRUE(testing::allClose(got[k], want[k], {1e-5, 1e-5})) << "output " << k;
}

const char* kLinearAddRelu = R"(
graph @g(%x: f32[B, 64], %w: f32[128, 64], %b: f32[128]) -> (f32[B, 128]) {
  %h = linear(%x, %w)
  %s = add(%h, %b)
  %y = relu(%s)
  return %y
})";

const char* kMatmulGeluResidual = R"(
graph @g(%a: f32[32, 16], %b: f32[16, 32], %c: f32[32], %r: f32[32, 32]) -> (f32[32, 32]) {
  %m = matmul(%a, %b)
  %s = add(%m, %c)
  %g = gelu(%s)
  %y = add(%g, %r)
  return %y
})";

const char* kSoftmax = R"(
graph @g(%x: f32[B, 64]) -> (f32[B, 64]) {
  %y = softmax(%x) {dim = -1}
  return %y
})";

const char* kLayerNorm = R"(
graph @g(%x: f32[B, 64], %w: f32[64], %b: f32[64]) -> (f32[B, 64]) {
  %y = layer_norm(%x, %w, %b)
  return %y
})";

const char* kAdagrad = R"(
graph @g(%p: f32[N], %s: f32[N], %g: f32[N]) -> (f32[N], f32[N]) {
  %gg = mul(%g, %g)
  %s2 = add(%s, %gg)
  %lrg = mul(%g, 0.01)
  %d = sqrt(%s2)
  %de = add(%d, 1e-10)
  %u = div(%lrg, %de)
  %p2 = sub(%p, %u)
  return %p2, %s2
})";

TEST(Fusion, LinearAddReluIsOneKernel) {
  auto m = testing::parseOk(kLinearAddRelu);
  auto kernels = kernelsAfterPipeline(*m);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].kind, "matmul_epilogue");
  EXPECT_EQ(kernels[0].name, "k0_linear_add_relu");
  expectSameResults(kLinearAddRelu, {{"B", 5}});
}

TEST(Fusion, MatmulGeluResidualIsOneKernel) {
  auto m = testing::parseOk(kMatmulGeluResidual);
  auto kernels = kernelsAfterPipeline(*m);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].kind, "matmul_epilogue");
  expectSameResults(kMatmulGeluResidual, {});
}

TEST(Fusion, SoftmaxAndLayerNormAreOneReductionKernelEach) {
  for (const char* text : {kSoftmax, kLayerNorm}) {
    auto m = testing::parseOk(text);
    auto kernels = kernelsAfterPipeline(*m);
    ASSERT_EQ(kernels.size(), 1u) << text;
    EXPECT_EQ(kernels[0].kind, "reduction");
    expectSameResults(text, {{"B", 7}});
  }
}

// Over a symbolic row length, layer_norm decomposes with `mean` ops and is
// still one kernel, which lowers to the kernel IR.
TEST(Fusion, SymbolicLayerNormIsOneReductionKernel) {
  const char* text = R"(
graph @g(%x: f32[B, N], %w: f32[N], %b: f32[N]) -> (f32[B, N]) {
  %y = layer_norm(%x, %w, %b)
  return %y
}
)";
  auto m = testing::parseOk(text);
  auto kernels = kernelsAfterPipeline(*m);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].kind, "reduction");
  EXPECT_NO_THROW(codegen::kernel::lower(*m->entry()->body.nodes().back()));
  expectSameResults(text, {{"B", 3}, {"N", 5}});
}

TEST(Fusion, AdagradStepIsOneKernelWithTwoResults) {
  auto m = testing::parseOk(kAdagrad);
  auto kernels = kernelsAfterPipeline(*m);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].results, 2u);
  expectSameResults(kAdagrad, {{"N", 100}});
}

TEST(Fusion, MlpExampleIsThreeKernels) {
  ir::DiagnosticEngine diags;
  auto m =
      frontend::parse(frontend::readSourceFile(std::string(GRAPHC_SOURCE_DIR) + "/examples/mlp.graph", diags), diags);
  ASSERT_TRUE(m);
  auto kernels = kernelsAfterPipeline(*m);
  std::vector<std::string> names;
  for (const Kernel& k : kernels) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"k0_linear_relu", "k1_linear", "k2_amax_sub_exp_sum_div"}));
}

TEST(Fusion, IndependentChainsOverOneInputShareAKernel) {
  const char* text = R"(
graph @g(%x: f32[64]) -> (f32[64], f32[64]) {
  %a = exp(%x)
  %a2 = mul(%a, %a)
  %b = tanh(%x)
  %b2 = add(%b, %b)
  return %a2, %b2
})";
  auto m = testing::parseOk(text);
  auto kernels = kernelsAfterPipeline(*m);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].results, 2u);
  expectSameResults(text, {});
}

}  // namespace
}  // namespace graphc
