// Attention kernels (fuse-attention, runtime/cpu/Attention.h) against the
// reference interpreter on the unfused graph: shapes that exercise every
// edge of the blocked computation — rows that are not a whole micro-kernel
// panel, several row blocks, several key blocks (the online softmax's
// rescaling), d and dv of 1 or odd, broadcast and regrouped batch dims,
// one query (decode), symbolic sizes, causal masks (whose blocks above the
// diagonal are skipped, unless a value there is inf) — and the rows whose
// softmax is NaN (every score −inf, a NaN score), with and without torch's
// safe softmax.
// Each graph must become one attention kernel; its results must match
// within torch's f32 tolerance, NaN where the reference has NaN; a second
// run with other inputs (the rebinding path) must match too.
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/cpu/CpuExecutable.h"
#include "ir/KernelKind.h"
#include "ir/Printer.h"
#include "runtime/Random.h"

namespace graphc {
namespace {

struct Case {
  std::string name;
  std::string text;  // parameters q, k, v [, mask]
  std::vector<std::vector<int64_t>> shapes;
  /// How the mask (parameter 3) is filled: 0 or −inf at random ("random"),
  /// −inf for the whole of batch index 1 ("batch1"), a NaN ("nan"), causal
  /// (−inf above the diagonal of its last two dims: "causal"), or causal with
  /// an inf among the values of the last key ("causal_inf_value").
  std::string mask = "random";
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

/// softmax(0.3 · q·k [+ mask]) · v as the passes before fuse leave it:
/// `scores` the product's shape, `regroup` the shape a reshape regroups it
/// to (BLOOM), and torch's safe-softmax where if `safe`.
std::string sdpa(const std::string& params, const std::string& scores, const std::string& out, bool masked, bool safe,
                 const std::string& regroup = "") {
  std::string rows = regroup.empty() ? scores : regroup;
  std::string body = fmt::format(
      "  %s = matmul(%q, %k) : f32[{0}]\n"
      "  %c = constant() {{value = 0.3}} : f32[]\n"
      "  %t = mul(%s, %c) : f32[{0}]\n",
      scores);
  std::string x = "%t";
  if (!regroup.empty()) {
    body += fmt::format("  %r = reshape(%t) {{shape = [{0}]}} : f32[{0}]\n", regroup);
    x = "%r";
  }
  if (masked) {
    body += fmt::format("  %m = add({}, %mask) : f32[{}]\n", x, rows);
    x = "%m";
  }
  std::string rowShape = rows.substr(0, rows.rfind(',')) + ", 1";
  body += fmt::format(
      "  %mx = amax({0}) {{dims = [-1], keepdim = true}} : f32[{2}]\n"
      "  %d = sub({0}, %mx) : f32[{1}]\n"
      "  %e = exp(%d) : f32[{1}]\n"
      "  %sum = sum(%e) {{dims = [-1], keepdim = true}} : f32[{2}]\n"
      "  %p = div(%e, %sum) : f32[{1}]\n",
      x, rows, rowShape);
  std::string p = "%p";
  if (safe) {
    body += fmt::format(
        "  %nan = ne(%p, %p) : bool[{0}]\n"
        "  %zero = constant() {{value = 0.0}} : f32[]\n"
        "  %ps = where(%nan, %zero, %p) : f32[{0}]\n",
        rows);
    p = "%ps";
  }
  body += fmt::format("  %o = matmul({}, %v) : f32[{}]\n  return %o\n", p, out);
  return fmt::format("graph @sdpa({}) -> (f32[{}]) {{\n{}}}\n", params, out, body);
}

std::vector<Case> cases() {
  return {
      {"rows_keys_and_dims_uneven",
       sdpa("%q: f32[2, 3, 37, 20], %k: f32[2, 3, 20, 300], %v: f32[2, 3, 300, 9], %mask: f32[2, 1, 1, 300]",
            "2, 3, 37, 300", "2, 3, 37, 9", true, false),
       {{2, 3, 37, 20}, {2, 3, 20, 300}, {2, 3, 300, 9}, {2, 1, 1, 300}}},
      {"several_row_and_key_blocks",
       sdpa("%q: f32[1, 2, 130, 16], %k: f32[1, 2, 16, 700], %v: f32[1, 2, 700, 64]", "1, 2, 130, 700", "1, 2, 130, 64",
            false, false),
       {{1, 2, 130, 16}, {1, 2, 16, 700}, {1, 2, 700, 64}}},
      {"d_and_dv_of_one",
       sdpa("%q: f32[3, 5, 1], %k: f32[3, 1, 6], %v: f32[3, 6, 1]", "3, 5, 6", "3, 5, 1", false, false),
       {{3, 5, 1}, {3, 1, 6}, {3, 6, 1}}},
      {"broadcast_batch",
       sdpa("%q: f32[2, 4, 16, 8], %k: f32[1, 4, 8, 40], %v: f32[4, 40, 8]", "2, 4, 16, 40", "2, 4, 16, 8", false,
            false),
       {{2, 4, 16, 8}, {1, 4, 8, 40}, {4, 40, 8}}},
      {"regrouped_batch",  // BLOOM: the scores [B·H, S, S] viewed as [B, H, S, S] before the mask
       sdpa("%q: f32[8, 16, 8], %k: f32[8, 8, 24], %v: f32[2, 4, 24, 8], %mask: f32[2, 1, 16, 24]", "8, 16, 24",
            "2, 4, 16, 8", true, false, "2, 4, 16, 24"),
       {{8, 16, 8}, {8, 8, 24}, {2, 4, 24, 8}, {2, 1, 16, 24}}},
      {"one_query",
       sdpa("%q: f32[2, 4, 1, 16], %k: f32[2, 4, 16, 33], %v: f32[2, 4, 33, 16], %mask: f32[2, 1, 1, 33]",
            "2, 4, 1, 33", "2, 4, 1, 16", true, false),
       {{2, 4, 1, 16}, {2, 4, 16, 33}, {2, 4, 33, 16}, {2, 1, 1, 33}}},
      {"symbolic_sizes",
       sdpa("%q: f32[B, 2, S, 8], %k: f32[B, 2, 8, S], %v: f32[B, 2, S, 8]", "B, 2, S, S", "B, 2, S, 8", false, false),
       {{3, 2, 70, 8}, {3, 2, 8, 70}, {3, 2, 70, 8}}},
      {"rows_of_minus_inf_are_nan",
       sdpa("%q: f32[2, 2, 9, 8], %k: f32[2, 2, 8, 300], %v: f32[2, 2, 300, 8], %mask: f32[2, 1, 1, 300]",
            "2, 2, 9, 300", "2, 2, 9, 8", true, false),
       {{2, 2, 9, 8}, {2, 2, 8, 300}, {2, 2, 300, 8}, {2, 1, 1, 300}},
       "batch1"},
      {"safe_softmax_rows_of_minus_inf_are_zero",
       sdpa("%q: f32[2, 2, 9, 8], %k: f32[2, 2, 8, 300], %v: f32[2, 2, 300, 8], %mask: f32[2, 1, 1, 300]",
            "2, 2, 9, 300", "2, 2, 9, 8", true, true),
       {{2, 2, 9, 8}, {2, 2, 8, 300}, {2, 2, 300, 8}, {2, 1, 1, 300}},
       "batch1"},
      {"causal_blocks_above_the_diagonal",
       sdpa("%q: f32[1, 2, 600, 16], %k: f32[1, 2, 16, 600], %v: f32[1, 2, 600, 8], %mask: f32[1, 1, 600, 600]",
            "1, 2, 600, 600", "1, 2, 600, 8", true, false),
       {{1, 2, 600, 16}, {1, 2, 16, 600}, {1, 2, 600, 8}, {1, 1, 600, 600}},
       "causal"},
      {"causal_with_an_inf_value_behind_the_mask",
       sdpa("%q: f32[1, 2, 600, 16], %k: f32[1, 2, 16, 600], %v: f32[1, 2, 600, 8], %mask: f32[1, 1, 600, 600]",
            "1, 2, 600, 600", "1, 2, 600, 8", true, false),
       {{1, 2, 600, 16}, {1, 2, 16, 600}, {1, 2, 600, 8}, {1, 1, 600, 600}},
       "causal_inf_value"},
      {"a_nan_score_makes_its_rows_nan",
       sdpa("%q: f32[2, 2, 9, 8], %k: f32[2, 2, 8, 300], %v: f32[2, 2, 300, 8], %mask: f32[2, 1, 1, 300]",
            "2, 2, 9, 300", "2, 2, 9, 8", true, false),
       {{2, 2, 9, 8}, {2, 2, 8, 300}, {2, 2, 300, 8}, {2, 1, 1, 300}},
       "nan"},
  };
}

std::vector<runtime::Tensor> inputsFor(const Case& c, uint64_t seed) {
  std::vector<runtime::Tensor> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i)
    inputs.push_back(runtime::randomTensor(ir::DType::F32, c.shapes[i], seed + i));
  if (c.shapes.size() < 4) return inputs;
  runtime::Tensor& mask = inputs[3];
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < mask.numel(); ++i) {
    const bool second = i >= mask.numel() / 2;
    float value = mask.getDouble(i) > 0.8 ? -inf : 0.0f;  // about a fifth of the keys masked
    if (c.mask == "batch1") value = second ? -inf : 0.0f;
    if (c.mask == "nan") value = i == 5 ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    if (c.mask.starts_with("causal")) {
      const int64_t keys = mask.shape().back(), query = i / keys % mask.shape()[mask.shape().size() - 2];
      value = i % keys > query ? -inf : 0.0f;
    }
    mask.setDouble(i, value);
  }
  if (c.mask == "causal_inf_value") {  // 0 · inf: NaN in the rows that mask the last key, as unfused
    runtime::Tensor& v = inputs[2];
    v.setDouble(v.shape().back() * (v.shape()[v.shape().size() - 2] - 1), inf);
  }
  return inputs;
}

int attentionKernels(const ir::Graph& g) {
  int count = 0;
  for (const auto& n : g.body.nodes())
    count += n->op == ir::OpId::Fused && ir::parseKernelKind(n->attrs.find("kind")->s) == ir::KernelKind::Attention;
  return count;
}

class CpuAttention : public ::testing::TestWithParam<Case> {};

TEST_P(CpuAttention, MatchesTheReferenceOnTheUnfusedGraph) {
  const Case& c = GetParam();
  auto original = testing::parseOk(c.text);
  auto fused = testing::parseOk(c.text);
  ASSERT_TRUE(original && fused);
  ir::DiagnosticEngine diags;
  passes::PassManager pm;
  passes::addDefaultPipeline(pm, {.attentionKernels = true});
  ASSERT_TRUE(pm.run(*fused, diags));
  ASSERT_EQ(attentionKernels(*fused->entry()), 1) << ir::print(*fused);
  auto executable = codegen::cpu::compileGraph(*fused->entry());
  for (uint64_t seed : {1, 7}) {  // the second run rebinds the first's plan to other tensors
    const std::vector<runtime::Tensor> inputs = inputsFor(c, seed);
    const std::vector<runtime::Tensor> want = runtime::interpret(*original->entry(), inputs);
    const std::vector<runtime::Tensor> got = executable->run(inputs);
    EXPECT_TRUE(testing::allClose(got[0], want[0], testing::defaultTolerance(ir::DType::F32)))
        << c.name << ", inputs of seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CpuAttention, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(CpuAttention, NoKeysIsTheSoftmaxError) {
  // amax over an empty row has no identity: the reference's error, not a result.
  const std::string text =
      sdpa("%q: f32[1, 4, 8], %k: f32[1, 8, S], %v: f32[1, S, 8]", "1, 4, S", "1, 4, 8", false, false);
  ir::DiagnosticEngine diags;
  passes::PassManager pm;
  auto m = testing::parseOk(text);
  passes::addDefaultPipeline(pm, {.attentionKernels = true});
  ASSERT_TRUE(pm.run(*m, diags));
  ASSERT_EQ(attentionKernels(*m->entry()), 1);
  auto executable = codegen::cpu::compileGraph(*m->entry());
  const std::vector<runtime::Tensor> inputs = {runtime::Tensor(ir::DType::F32, {1, 4, 8}),
                                               runtime::Tensor(ir::DType::F32, {1, 8, 0}),
                                               runtime::Tensor(ir::DType::F32, {1, 0, 8})};
  auto original = testing::parseOk(text);
  EXPECT_THROW(runtime::interpret(*original->entry(), inputs), ir::Error);
  EXPECT_THROW(
      {
        try {
          executable->run(inputs);
        } catch (const ir::Error& e) {
          EXPECT_STREQ(e.what(), "amax of an empty tensor has no identity");
          throw;
        }
      },
      ir::Error);
}

}  // namespace
}  // namespace graphc
