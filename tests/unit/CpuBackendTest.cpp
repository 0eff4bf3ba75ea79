// The cpu backend against the reference interpreter (the oracle) and
// PyTorch on every golden op × dtype case, with torch's default tolerances
// (tests/support/Tolerance.h):
// outputs are poisoned before each run so that an element a kernel fails to
// write shows up, and two runs must agree bit for bit (no order-dependent
// parallel reductions). Plus capture/replay and input validation.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "GoldenCases.h"
#include "ProjectGraphs.h"
#include "TestUtil.h"
#include "codegen/cpu/CpuExecutable.h"
#include "codegen/cpu/Jit.h"
#include "codegen/kernel/Lowering.h"
#include "frontend/parser/Parser.h"
#include "passes/PassManager.h"
#include "runtime/Npy.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

std::unique_ptr<ir::Module> optimised(const std::string& path) {
  ir::DiagnosticEngine diags;
  auto m = frontend::parse(frontend::readSourceFile(path, diags), diags);
  if (!m) return nullptr;
  passes::PassManager pm;
  passes::addDefaultPipeline(pm);
  if (!pm.run(*m, diags)) return nullptr;
  return m;
}

bool bitwiseEqual(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

class CpuGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuGolden, MatchesReferenceAndPyTorch) {
  const std::string name = GetParam();
  const std::string path = (testing::kGoldenCases / (name + ".graph")).string();
  auto source = optimised(path);
  ASSERT_TRUE(source);
  ir::DiagnosticEngine diags;
  auto original = frontend::parse(frontend::readSourceFile(path, diags), diags);
  ASSERT_TRUE(original);
  const ir::Graph& g = *source->entry();
  std::vector<runtime::Tensor> inputs;
  for (size_t k = 0; k < g.body.params().size(); ++k)
    inputs.push_back(runtime::readNpy((testing::kGoldenCases / (name + ".in" + std::to_string(k) + ".npy")).string()));

  auto executable = codegen::cpu::compileGraph(g);
  std::vector<runtime::Tensor> first = testing::poisonedOutputs(g, inputs),
                               second = testing::poisonedOutputs(g, inputs);
  executable->capture(inputs, first);
  executable->replay();
  executable->capture(inputs, second);
  executable->replay();
  const std::vector<runtime::Tensor> reference = runtime::interpret(*original->entry(), inputs);
  const bool isEigh = name.rfind("eigh", 0) == 0;
  for (size_t k = 0; k < first.size(); ++k) {
    EXPECT_TRUE(bitwiseEqual(first[k], second[k])) << name << " output " << k << " differs from run to run";
    runtime::Tensor torch =
        runtime::readNpy((testing::kGoldenCases / (name + ".out" + std::to_string(k) + ".npy")).string());
    testing::Tolerance tol = testing::defaultTolerance(torch.dtype());
    if (isEigh) tol = {tol.rtol * 10, tol.atol * 10};  // a different solver (Jacobi or LAPACK in f32)
    const runtime::Tensor actual = isEigh && k == 1 ? testing::alignColumns(first[k], reference[k]) : first[k];
    EXPECT_TRUE(testing::allClose(actual, reference[k], tol)) << name << " output " << k << " vs reference";
    const runtime::Tensor vsTorch = isEigh && k == 1 ? testing::alignColumns(first[k], torch) : first[k];
    EXPECT_TRUE(testing::allClose(vsTorch, torch, tol)) << name << " output " << k << " vs PyTorch";
  }
}

INSTANTIATE_TEST_SUITE_P(OpsByDType, CpuGolden, ::testing::ValuesIn(testing::goldenCaseNames()),
                         [](const auto& info) { return info.param; });

const char* kMlp = R"(
graph @mlp(%x: f32[B, 16], %w1: f32[32, 16], %b1: f32[32], %w2: f32[4, 32], %b2: f32[4]) -> (f32[B, 4]) {
  %h = linear(%x, %w1, %b1) : f32[B, 32]
  %a = relu(%h)
  %logits = linear(%a, %w2, %b2)
  %probs = softmax(%logits) {dim = -1}
  return %probs
}
)";

std::vector<runtime::Tensor> mlpInputs(int64_t batch, uint64_t seed) {
  return {
      runtime::randomTensor(ir::DType::F32, {batch, 16}, seed),
      runtime::randomTensor(ir::DType::F32, {32, 16}, seed + 1), runtime::randomTensor(ir::DType::F32, {32}, seed + 2),
      runtime::randomTensor(ir::DType::F32, {4, 32}, seed + 3), runtime::randomTensor(ir::DType::F32, {4}, seed + 4)};
}

TEST(CpuExecutable, ReplaySeesNewInputValuesWithoutRebinding) {
  auto m = testing::optimisedOk(kMlp);
  auto original = testing::parseOk(kMlp);
  auto exe = codegen::cpu::compileGraph(*m->entry());
  std::vector<runtime::Tensor> inputs = mlpInputs(64, 1);
  std::vector<runtime::Tensor> outputs = testing::poisonedOutputs(*m->entry(), inputs);
  exe->capture(inputs, outputs);
  exe->replay();
  EXPECT_TRUE(testing::allClose(outputs[0], runtime::interpret(*original->entry(), inputs)[0], {1.3e-6, 1e-5}));
  // New values in the same bound tensors: replay computes on them.
  runtime::Tensor fresh = runtime::randomTensor(ir::DType::F32, {64, 16}, 99);
  std::memcpy(inputs[0].data(), fresh.data(), fresh.nbytes());
  exe->replay();
  EXPECT_TRUE(testing::allClose(outputs[0], runtime::interpret(*original->entry(), inputs)[0], {1.3e-6, 1e-5}));
}

TEST(CpuExecutable, SymbolicSizesAreBoundPerCall) {
  auto m = testing::optimisedOk(kMlp);
  auto original = testing::parseOk(kMlp);
  auto exe = codegen::cpu::compileGraph(*m->entry());
  for (int64_t batch : {1, 7, 300}) {
    std::vector<runtime::Tensor> inputs = mlpInputs(batch, static_cast<uint64_t>(batch));
    std::vector<runtime::Tensor> out = exe->run(inputs);
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{batch, 4}));
    EXPECT_TRUE(testing::allClose(out[0], runtime::interpret(*original->entry(), inputs)[0], {1.3e-6, 1e-5}));
  }
}

TEST(CpuExecutable, RejectsBadInputsWithTheParameterNamed) {
  auto m = testing::optimisedOk(kMlp);
  auto exe = codegen::cpu::compileGraph(*m->entry());
  std::vector<runtime::Tensor> inputs = mlpInputs(4, 1);
  inputs[1] = runtime::randomTensor(ir::DType::F32, {32, 15}, 1);
  try {
    exe->run(inputs);
    FAIL() << "expected an error";
  } catch (const ir::Error& e) {
    EXPECT_STREQ(e.what(), "input %w1: dim 1 must be 16, got 15 (f32[32, 16] vs f32[32, 15])");
  }
  inputs = mlpInputs(4, 1);
  inputs[0] = runtime::randomTensor(ir::DType::F64, {4, 16}, 1);
  EXPECT_THROW(exe->run(inputs), ir::Error);
  inputs.pop_back();
  EXPECT_THROW(exe->run(inputs), ir::Error);
}

TEST(CpuExecutable, CaptureRejectsWrongOrOverlappingOutputs) {
  auto m = testing::optimisedOk(kMlp);
  auto exe = codegen::cpu::compileGraph(*m->entry());
  std::vector<runtime::Tensor> inputs = mlpInputs(4, 1);
  EXPECT_THROW(exe->capture(inputs, {runtime::Tensor(ir::DType::F32, {4, 5})}), ir::Error);
  EXPECT_THROW(exe->capture(inputs, {}), ir::Error);
  // An output that aliases an input would be read after it is written.
  runtime::Tensor alias = runtime::Tensor::wrap(ir::DType::F32, {4, 4}, inputs[0].data(), nullptr);
  EXPECT_THROW(exe->capture(inputs, {alias}), ir::Error);
  EXPECT_THROW(exe->replay(), ir::Error);  // nothing captured
}

// GEMM shapes that take each tiling path: many row tiles, one row tile
// split into column blocks (per-row epilogue calls; the GEMM must have work
// for more than one thread), broadcast batches, vector operands, and f16
// operands widened to f32.
/// The optimised graph on the cpu backend (captured, into poisoned
/// outputs) against the reference on the graph as written, on random
/// inputs; symbolic sizes are 7. f32 within 1e-5 (sgemm accumulates in
/// f32), other dtypes within their default tolerance.
void expectCpuMatchesReference(const char* text) {
  auto m = testing::optimisedOk(text);
  auto original = testing::parseOk(text);
  auto exe = codegen::cpu::compileGraph(*m->entry());
  std::vector<runtime::Tensor> inputs;
  for (const auto& p : m->entry()->body.params()) {
    std::vector<int64_t> shape;
    for (const ir::Dim& d : p->type.shape) shape.push_back(d.isStatic() ? d.size : 7);
    inputs.push_back(runtime::randomTensor(p->type.dtype, shape, 11 + static_cast<uint64_t>(p->index())));
  }
  std::vector<runtime::Tensor> got = testing::poisonedOutputs(*m->entry(), inputs);
  exe->capture(inputs, got);
  exe->replay();
  const std::vector<runtime::Tensor> want = runtime::interpret(*original->entry(), inputs);
  ASSERT_EQ(got.size(), want.size()) << text;
  for (size_t k = 0; k < got.size(); ++k) {
    testing::Tolerance tol = testing::defaultTolerance(want[k].dtype());
    if (want[k].dtype() == ir::DType::F32) tol = {1e-5, 1e-5};
    EXPECT_TRUE(testing::allClose(got[k], want[k], tol)) << "result " << k << " of\n" << text;
  }
}

TEST(CpuExecutable, GemmTilingPathsMatchReference) {
  const char* cases[] = {
      "graph @g(%x: f32[3, 64], %w: f32[6000, 64], %b: f32[6000]) -> (f32[3, 6000]) {\n"
      "  %h = linear(%x, %w, %b)\n  %y = relu(%h)\n  return %y\n}\n",
      "graph @g(%x: f32[1100, 16], %w: f32[16, 40], %r: f32[1100, 40]) -> (f32[1100, 40]) {\n"
      "  %h = matmul(%x, %w)\n  %y = add(%h, %r)\n  return %y\n}\n",
      "graph @g(%a: f32[2, 1, 5, 7], %b: f32[3, 7, 200]) -> (f32[2, 3, 5, 200]) {\n"
      "  %h = matmul(%a, %b)\n  %y = tanh(%h)\n  return %y\n}\n",
      "graph @g(%v: f64[33], %m: f64[33, 130]) -> (f64[130]) {\n  %y = matmul(%v, %m)\n  return %y\n}\n",
      "graph @g(%m: f64[70, 33], %v: f64[33]) -> (f64[70]) {\n  %y = matmul(%m, %v)\n  return %y\n}\n",
      "graph @g(%x: f16[4, 32], %w: f16[96, 32], %b: f16[96]) -> (f16[4, 96]) {\n"
      "  %h = linear(%x, %w, %b)\n  %y = gelu(%h)\n  return %y\n}\n",
      // canonicalize's rewrites of transposed operands: x·wᵀ of an input
      // weight as linear(x, w); gᵀ·x of a wide g as (xᵀ·g)ᵀ.
      "graph @g(%x: f32[2, 9, 48], %w: f32[40, 48]) -> (f32[2, 9, 40]) {\n"
      "  %t = permute(%w) {dims = [1, 0]}\n  %y = matmul(%x, %t)\n  return %y\n}\n",
      "graph @g(%g: f32[96, 700], %x: f32[96, 24]) -> (f32[700, 24]) {\n"
      "  %t = transpose(%g) {dim0 = 0, dim1 = 1}\n  %y = matmul(%t, %x)\n  return %y\n}\n",
  };
  for (const char* text : cases) expectCpuMatchesReference(text);
}

/// A negative step's index, size - 1 - |step|·i, through the reshapes,
/// permutes and reductions it fuses with (the index rules assume no
/// negative index: these would show it if one leaked).
TEST(CpuExecutable, ReversingSlicesFuseWithReshapesPermutesAndReductions) {
  const char* cases[] = {
      // The flipped, channel-swapped filter of a convolution's input gradient.
      "graph @g(%gy: f32[2, 8, 5, 5], %w: f32[8, 6, 3, 3]) -> (f32[2, 6, 5, 5]) {\n"
      "  %a = reshape(%w) {shape = [1, 8, 6, 3, 3]}\n  %b = permute(%a) {dims = [0, 2, 1, 3, 4]}\n"
      "  %c = reshape(%b) {shape = [6, 8, 3, 3]}\n  %d = slice(%c) {dim = 2, step = -1}\n"
      "  %f = slice(%d) {dim = 3, step = -1}\n"
      "  %y = conv(%gy, %f) {padding = [1, 1, 1, 1]}\n  return %y\n}\n",
      // Reversed, then ravelled with its neighbour and cut again.
      "graph @g(%x: f32[4, 6]) -> (f32[2, 8], f32[4]) {\n"
      "  %r = slice(%x) {dim = 1, step = -1}\n  %l = reshape(%r) {shape = [24]}\n"
      "  %m = reshape(%l) {shape = [3, 8]}\n  %s = slice(%m) {dim = 0, start = 2, step = -2}\n"
      "  %e = exp(%s)\n  %t = slice(%x) {dim = 1, start = -2, end = 0, step = -3}\n"
      "  %u = sum(%t) {dims = [1]}\n  return %e, %u\n}\n",
      // A symbolic batch beside a reversed static dim; a permute after it.
      "graph @g(%x: f32[B, 5, 3], %y: f32[3, B, 2]) -> (f32[3, B, 2]) {\n"
      "  %r = slice(%x) {dim = 1, start = 3, step = -2}\n  %p = permute(%r) {dims = [2, 0, 1]}\n"
      "  %z = add(%p, %y)\n  return %z\n}\n",
  };
  for (const char* text : cases) expectCpuMatchesReference(text);
}

/// A one-kernel graph's kernel, compiled alone, called directly over
/// several partitions of its points (row-aligned; cut one point into a
/// row and one before a row's end; random), against the reference: what
/// any [begin, end) a parallel loop may hand it computes. `marker`: a
/// block name the kernel's LLVM IR must hold (the path under test);
/// `nans`: flat positions of the first input set to NaN.
void expectKernelMatchesOverAnyRange(const char* text, const char* marker, std::vector<int64_t> nans = {}) {
  auto m = testing::optimisedOk(text);
  const ir::Graph& g = *m->entry();
  const ir::Node* fused = nullptr;
  for (const auto& n : g.body.nodes()) {
    if (n->op != ir::OpId::Fused) continue;
    ASSERT_EQ(fused, nullptr) << "more than one kernel:\n" << text;
    fused = n.get();
  }
  ASSERT_NE(fused, nullptr) << text;
  const codegen::kernel::Kernel kernel = codegen::kernel::lower(*fused);
  ASSERT_NE(codegen::cpu::Jit::instance().emitLLVM(kernel).find(marker), std::string::npos)
      << "no " << marker << ":\n"
      << codegen::kernel::print(kernel);
  auto compiled = codegen::cpu::Jit::instance().compile(kernel);
  std::vector<runtime::Tensor> inputs;
  for (const auto& p : g.body.params())
    inputs.push_back(
        runtime::randomTensor(p->type.dtype, runtime::concreteShape(p->type), 5 + static_cast<uint64_t>(p->index())));
  for (int64_t i : nans) inputs[0].setDouble(i, NAN);
  const std::vector<runtime::Tensor> want = runtime::interpret(*testing::parseOk(text)->entry(), inputs);
  int64_t points = 1;
  for (const ir::Dim& d : kernel.outer) points *= d.size;
  const int64_t row = kernel.outer.back().size;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    std::vector<runtime::Tensor> got = testing::poisonedOutputs(g, inputs);
    std::vector<void*> buffers;
    for (const ir::Value* v : fused->operands) buffers.push_back(inputs.at(static_cast<size_t>(v->index())).data());
    for (size_t r = 0; r < fused->numResults(); ++r) {
      const std::vector<ir::Value*>& returned = g.body.returns;
      const auto at = std::find(returned.begin(), returned.end(), fused->result(r));
      ASSERT_NE(at, returned.end());
      buffers.push_back(got.at(static_cast<size_t>(at - returned.begin())).data());
    }
    std::vector<int64_t> cuts = {0, points};
    if (seed == 0) cuts.insert(cuts.end(), {row, 2 * row + 1, 5 * row - 1, 1, points - 1});
    if (seed > 1)
      for (uint64_t c = 0; c < 3 * seed; ++c) cuts.push_back(static_cast<int64_t>((c * 7919 + seed * 104729) % points));
    for (int64_t& c : cuts) c = std::clamp<int64_t>(c, 0, points);
    std::sort(cuts.begin(), cuts.end());
    for (size_t c = 0; c + 1 < cuts.size(); ++c) compiled->pointwise()(buffers.data(), nullptr, cuts[c], cuts[c + 1]);
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_TRUE(testing::allClose(got[k], want[k], testing::defaultTolerance(want[k].dtype())))
          << "result " << k << ", cuts " << seed << " of\n"
          << text;
  }
}

/// A transpose's kernel (stores along the last dim, a load along the one
/// before) goes by tiles of rows.
TEST(CpuExecutable, TransposesByTilesMatchTheReferenceOverAnyRange) {
  const char* cases[] = {
      // Fused with another input read in order; two outputs.
      "graph @g(%x: f32[37, 53], %y: f32[53, 37]) -> (f32[53, 37], f32[53, 37]) {\n"
      "  %p = permute(%x) {dims = [1, 0]}\n  %e = exp(%p)\n  %z = add(%e, %y)\n  return %z, %p\n}\n",
      // Rows of 19 under a batch dim: tiles end where a batch's rows do.
      "graph @g(%x: f32[3, 21, 19]) -> (f32[3, 19, 21]) {\n"
      "  %p = permute(%x) {dims = [0, 2, 1]}\n  return %p\n}\n",
      "graph @g(%x: bf16[40, 24]) -> (bf16[24, 40]) {\n  %p = permute(%x) {dims = [1, 0]}\n"
      "  %n = neg(%p)\n  return %n\n}\n",
      "graph @g(%x: i64[17, 33]) -> (i64[33, 17]) {\n  %p = permute(%x) {dims = [1, 0]}\n  return %p\n}\n",
  };
  for (const char* text : cases) expectKernelMatchesOverAnyRange(text, "tile");
  expectCpuMatchesReference(  // symbolic rows and row length, through the executable's own ranges
      "graph @g(%x: f32[B, 40], %y: f32[40, B]) -> (f32[40, B]) {\n"
      "  %p = permute(%x) {dims = [1, 0]}\n  %z = mul(%p, %y)\n  return %z\n}\n");
}

/// A reduction over a dim whose elements lie a page or more apart (a
/// bias's gradient) goes by tiles of outputs, the reduced loops outer.
TEST(CpuExecutable, ReductionsAcrossRowsMatchTheReferenceOverAnyRange) {
  const char* cases[] = {
      // Tiles of 32 and a partial one.
      "graph @g(%x: f32[37, 1030]) -> (f32[1030]) {\n  %s = sum(%x) {dims = [0]}\n  return %s\n}\n",
      // Reduced outside a kept dim.
      "graph @g(%x: f32[5, 3, 1024]) -> (f32[3, 1024]) {\n  %s = amin(%x) {dims = [0]}\n  return %s\n}\n",
      // Two reduced dims.
      "graph @g(%x: f32[4, 5, 1030]) -> (f32[1030]) {\n  %s = sum(%x) {dims = [0, 1]}\n  return %s\n}\n",
      "graph @g(%x: i64[9, 1100]) -> (i64[1100]) {\n  %s = sum(%x) {dims = [0]}\n  return %s\n}\n",
      "graph @g(%x: bf16[33, 1050]) -> (bf16[1050]) {\n  %s = sum(%x) {dims = [0]}\n  return %s\n}\n",
  };
  for (const char* text : cases) expectKernelMatchesOverAnyRange(text, "columns");
  // A NaN carried by the maximum of its column (in the first and a later
  // row); keepdim.
  expectKernelMatchesOverAnyRange(
      "graph @g(%x: f32[9, 2, 1100]) -> (f32[1, 2, 1100]) {\n"
      "  %m = amax(%x) {dims = [0], keepdim = true}\n  return %m\n}\n",
      "columns", {7, 3 * 2200 + 1100 + 500});
  expectCpuMatchesReference(  // a symbolic batch reduced, through the executable's own ranges
      "graph @g(%x: f32[B, 2048]) -> (f32[2048]) {\n  %s = sum(%x) {dims = [0]}\n  return %s\n}\n");
}

TEST(CpuExecutable, CondRunsTheTakenBranch) {
  const char* text = R"(
graph @g(%p: bool[], %x: f32[64, 64]) -> (f32[64, 64]) {
  %y = cond(%p, %x) then(%a: f32[64, 64]) {
    %m = matmul(%a, %a)
    %r = relu(%m)
    return %r
  } else(%b: f32[64, 64]) {
    %e = exp(%b)
    return %e
  }
  return %y
}
)";
  auto m = testing::optimisedOk(text);
  auto original = testing::parseOk(text);
  auto exe = codegen::cpu::compileGraph(*m->entry());
  runtime::Tensor x = runtime::randomTensor(ir::DType::F32, {64, 64}, 3);
  for (bool taken : {true, false}) {
    runtime::Tensor p(ir::DType::Bool, {});
    p.setInt(0, taken);
    std::vector<runtime::Tensor> out = exe->run({p, x});
    EXPECT_TRUE(testing::allClose(out[0], runtime::interpret(*original->entry(), {p, x})[0], {1e-5, 1e-5}))
        << "branch " << taken;
  }
}

}  // namespace
}  // namespace graphc

namespace graphc {
namespace {

namespace fs = std::filesystem;

class CpuProjectGraph : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuProjectGraph, MatchesReference) {
  const std::string param = GetParam();
  const size_t hash = param.rfind('#');
  const std::string chunk =
      testing::chunksOf(fs::path(GRAPHC_SOURCE_DIR) / param.substr(0, hash))[std::stoul(param.substr(hash + 1))];
  auto original = testing::parseOk(chunk);
  auto m = testing::optimisedOk(chunk);
  ASSERT_TRUE(original && m);
  const ir::Graph& g = *m->entry();
  const std::vector<runtime::Tensor> inputs = testing::randomInputs(*original->entry(), 7);
  // The oracle first: the replay writes the inputs results update in place.
  const std::vector<runtime::Tensor> want = testing::copiesOf(runtime::interpret(*original->entry(), inputs));
  auto exe = codegen::cpu::compileGraph(g);
  std::vector<runtime::Tensor> outputs = testing::poisonedOutputs(g, inputs);
  exe->capture(inputs, outputs);
  exe->replay();
  bool hasEigh = false;
  for (const auto& n : g.body.nodes()) hasEigh |= n->op == ir::OpId::Eigh;
  for (size_t k = 0; k < want.size(); ++k) {
    const bool vectors =
        hasEigh && outputs[k].rank() >= 2 && outputs[k].shape().back() == outputs[k].shape()[outputs[k].rank() - 2];
    const runtime::Tensor got = vectors ? testing::alignColumns(outputs[k], want[k]) : outputs[k];
    testing::Tolerance tol = testing::defaultTolerance(want[k].dtype());
    if (hasEigh) tol = {tol.rtol * 10, tol.atol * 10};
    // sgemm accumulates in f32, the oracle in f64: a chain of matmuls drifts
    // past torch's elementwise f32 tolerance where its sums cancel
    // (memory-plan.graph's six: 1.1e-5 relative), so the absolute part
    // scales with the output's magnitude.
    if (want[k].dtype() == ir::DType::F32 && testing::hasGemm(original->entry()->body)) {
      double largest = 0;
      for (int64_t i = 0; i < want[k].numel(); ++i) largest = std::max(largest, std::fabs(want[k].getDouble(i)));
      tol = {1e-5, 1e-5 * std::max(largest, 1.0)};
    }
    EXPECT_TRUE(testing::allClose(got, want[k], tol)) << GetParam() << " output " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(ExamplesAndLit, CpuProjectGraph, ::testing::ValuesIn(testing::projectGraphs()),
                         [](const auto& info) { return testing::paramName(info.param); });

}  // namespace
}  // namespace graphc
