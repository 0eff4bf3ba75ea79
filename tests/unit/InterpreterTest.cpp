// The reference interpreter beyond the golden cases: input validation,
// symbolic sizes, cond and fused regions, integer wrap-around.
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

using ir::DType;
using runtime::Tensor;
using testing::tensorOf;

std::string runError(const ir::Graph& g, const std::vector<Tensor>& inputs) {
  try {
    runtime::interpret(g, inputs);
  } catch (const ir::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Interpreter, InputsAreCheckedAgainstTheSignature) {
  auto m = testing::parseOk(R"(
graph @g(%x: f32[B, 2], %y: f32[B, 2]) -> (f32[B, 2]) {
  %z = add(%x, %y)
  return %z
})");
  ASSERT_TRUE(m);
  const ir::Graph& g = *m->entry();
  Tensor a(DType::F32, {3, 2}), b(DType::F32, {4, 2});
  EXPECT_EQ(runError(g, {a}), "@g takes 2 inputs, got 1");
  EXPECT_EQ(runError(g, {a, Tensor(DType::F64, {3, 2})}), "input %y: expected f32[B, 2], got f64[3, 2]");
  EXPECT_EQ(runError(g, {a, Tensor(DType::F32, {3})}), "input %y: expected rank 2 (f32[B, 2]), got f32[3]");
  EXPECT_EQ(runError(g, {a, Tensor(DType::F32, {3, 5})}), "input %y: dim 1 must be 2, got 5 (f32[B, 2] vs f32[3, 5])");
  EXPECT_EQ(runError(g, {a, b}), "input %y: dim 0 is 4 but B = 3 from %x");
  EXPECT_EQ(runtime::interpret(g, {a, a})[0].shape(), (std::vector<int64_t>{3, 2}));
}

TEST(Interpreter, SymbolicSizesReachCreationAndReshape) {
  auto m = testing::parseOk(R"(
graph @g(%x: f32[B, 4]) -> (f32[2, B, 2]) {
  %z = full() {value = 1.0} : f32[B, 4]
  %s = add(%x, %z)
  %r = reshape(%s) {shape = [B, 2, -1]}
  %p = permute(%r) {dims = [1, 0, 2]}
  return %p
})");
  ASSERT_TRUE(m);
  Tensor x = tensorOf(DType::F32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor out = runtime::interpret(*m->entry(), {x})[0];
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 3, 2}));
  // out[1][2][0] = x[2][2] + 1 = 11
  EXPECT_EQ(out.getDouble(1 * 6 + 2 * 2 + 0), 11.0);
}

TEST(Interpreter, CondRunsOnlyTheTakenBranch) {
  auto ok = testing::parseOk(R"(
graph @g(%p: bool[], %x: f32[3]) -> (f32[3]) {
  %y = cond(%p, %x) then(%a: f32[3]) {
    %r = mul(%a, 2.0)
    return %r
  } else(%a: f32[3]) {
    %n = neg(%a)
    return %n
  }
  return %y
})");
  ASSERT_TRUE(ok);
  Tensor x = tensorOf(DType::F32, {3}, {1, -2, 3});
  Tensor yes = tensorOf(DType::Bool, {}, {1}), no = tensorOf(DType::Bool, {}, {0});
  EXPECT_TRUE(
      testing::allClose(runtime::interpret(*ok->entry(), {yes, x})[0], tensorOf(DType::F32, {3}, {2, -4, 6}), {0, 0}));
  EXPECT_TRUE(
      testing::allClose(runtime::interpret(*ok->entry(), {no, x})[0], tensorOf(DType::F32, {3}, {-1, 2, -3}), {0, 0}));
}

TEST(Interpreter, FusedRunsItsBody) {
  auto m = testing::parseOk(R"(
graph @g(%x: f32[2, 2], %w: f32[2, 2], %b: f32[2]) -> (f32[2, 2]) {
  %y = fused(%x, %w, %b) {kind = "matmul_epilogue", name = "k0_linear_add_relu"} body(%a: f32[2, 2], %c: f32[2, 2], %d: f32[2]) {
    %l = linear(%a, %c)
    %s = add(%l, %d)
    %r = relu(%s)
    return %r
  } : f32[2, 2]
  return %y
})");
  ASSERT_TRUE(m);
  Tensor x = tensorOf(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor w = tensorOf(DType::F32, {2, 2}, {1, 0, 0, -1});
  Tensor b = tensorOf(DType::F32, {2}, {0.5, 1});
  // x @ wᵀ = [[1, -2], [3, -4]]; + b = [[1.5, -1], [3.5, -3]]; relu.
  EXPECT_TRUE(testing::allClose(runtime::interpret(*m->entry(), {x, w, b})[0],
                                tensorOf(DType::F32, {2, 2}, {1.5, 0, 3.5, 0}), {0, 0}));
}

TEST(Interpreter, IntegersWrapAsTwosComplement) {
  auto m = testing::parseOk(R"(
graph @g(%x: i8[3], %y: i64[1]) -> (i8[3], i64[1], i64[]) {
  %s = add(%x, %x)
  %n = neg(%y)
  %t = sum(%x)
  return %s, %n, %t
})");
  ASSERT_TRUE(m);
  Tensor x(DType::I8, {3});
  x.setInt(0, 100);
  x.setInt(1, -128);
  x.setInt(2, 3);
  Tensor y(DType::I64, {1});
  y.setInt(0, INT64_MIN);
  auto out = runtime::interpret(*m->entry(), {x, y});
  EXPECT_EQ(out[0].getInt(0), -56);  // 200 wraps
  EXPECT_EQ(out[0].getInt(1), 0);    // -256 wraps
  EXPECT_EQ(out[1].getInt(0), INT64_MIN);
  EXPECT_EQ(out[2].getInt(0), -25);  // sums widen to i64, no wrap
}

TEST(Interpreter, CastSaturatesAndMapsNanToZero) {
  auto m = testing::parseOk(R"(
graph @g(%x: f32[4]) -> (i8[4]) {
  %c = cast(%x) {dtype = i8}
  return %c
})");
  ASSERT_TRUE(m);
  Tensor x = tensorOf(DType::F32, {4}, {1e9, -1e9, NAN, -3.7});
  Tensor out = runtime::interpret(*m->entry(), {x})[0];
  EXPECT_EQ(out.getInt(0), 127);
  EXPECT_EQ(out.getInt(1), -128);
  EXPECT_EQ(out.getInt(2), 0);
  EXPECT_EQ(out.getInt(3), -3);  // truncation toward zero
}

TEST(Interpreter, NanPropagatesThroughMaxAndReductions) {
  auto m = testing::parseOk(R"(
graph @g(%x: f32[3]) -> (f32[3], f32[]) {
  %m = maximum(%x, 0.0)
  %a = amax(%x)
  return %m, %a
})");
  ASSERT_TRUE(m);
  auto out = runtime::interpret(*m->entry(), {tensorOf(DType::F32, {3}, {1, NAN, -1})});
  EXPECT_TRUE(std::isnan(out[0].getDouble(1)));
  EXPECT_EQ(out[0].getDouble(2), 0.0);
  EXPECT_TRUE(std::isnan(out[1].getDouble(0)));
}

TEST(Interpreter, HugeSymbolicSizesAreAnErrorNotACrash) {
  auto m = testing::parseOk(R"(
graph @g(%x: f32[B]) -> (f32[B, B, B]) {
  %z = full() {value = 0.0} : f32[B, B, B]
  return %z
})");
  ASSERT_TRUE(m);
  Tensor x(DType::F32, {3000000});
  EXPECT_NE(runError(*m->entry(), {x}).find("too large"), std::string::npos);
}

}  // namespace
}  // namespace graphc

namespace graphc {
namespace {

TEST(Interpreter, SliceWithAHugeStepTakesOneElement) {
  auto m = testing::parseOk(R"(
graph @g(%x: f32[5, 2]) -> (f32[1, 2]) {
  %s = slice(%x) {dim = 0, start = 1, step = 9223372036854775807}
  return %s
})");
  ASSERT_TRUE(m);
  Tensor x = tensorOf(DType::F32, {5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(testing::allClose(runtime::interpret(*m->entry(), {x})[0], tensorOf(DType::F32, {1, 2}, {2, 3}), {0, 0}));
}

}  // namespace
}  // namespace graphc
