// The op type rules: broadcasting over static and symbolic dims, matmul's
// vector cases, reshape's -1 with symbols.
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "ir/ShapeRules.h"

namespace graphc {
namespace {

using ir::Dim;
using ir::Shape;

TEST(Broadcast, StaticAndSymbolic) {
  std::string error;
  auto s = ir::rules::broadcastShapes({Dim::of(3), Dim::of(1)}, {Dim::of(4)}, error);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (Shape{Dim::of(3), Dim::of(4)}));
  s = ir::rules::broadcastShapes({Dim::sym("B"), Dim::of(1)}, {Dim::of(1), Dim::of(8)}, error);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (Shape{Dim::sym("B"), Dim::of(8)}));
  EXPECT_FALSE(ir::rules::broadcastShapes({Dim::sym("B")}, {Dim::sym("C")}, error));
  EXPECT_NE(error.find("size B vs C"), std::string::npos);
  EXPECT_FALSE(ir::rules::broadcastShapes({Dim::sym("B")}, {Dim::of(2)}, error));
}

TEST(TypeRules, ResultTypesOfParsedGraph) {
  auto m = testing::parseOk(R"(
graph @g(%a: f32[B, 3, 4], %v: f32[4], %x: f32[B, 12]) -> (f32[B, 3]) {
  %mv = matmul(%a, %v)
  %r = reshape(%x) {shape = [-1, 3, 4]}
  %p = permute(%r) {dims = [1, 0, 2]}
  %s = sum(%p) {dims = [0, 2], keepdim = true}
  %e = expand(%s) {shape = [2, B, 1]}
  %t = slice(%x) {dim = 1, start = 2, end = -1, step = 3}
  %c = concat(%t, %t) {dim = 1}
  %i = cast(%c) {dtype = i32}
  %si = sum(%i) {dims = [1]}
  return %mv
})");
  ASSERT_TRUE(m);
  std::vector<std::string> types;
  for (const auto& n : m->entry()->body.nodes()) types.push_back(ir::toString(n->result()->type));
  EXPECT_EQ(types, (std::vector<std::string>{"f32[B, 3]", "f32[B, 3, 4]", "f32[3, B, 4]", "f32[1, B, 1]",
                                             "f32[2, B, 1]", "f32[B, 3]", "f32[B, 6]", "i32[B, 6]", "i64[B]"}));
}

TEST(TypeRules, ReshapeCannotSplitASymbol) {
  auto d = testing::parseError(R"(
graph @g(%x: f32[B, 4]) -> (f32[2, 2]) {
  %y = reshape(%x) {shape = [8, -1]}
  return %y
})");
  EXPECT_NE(d.message.find("cannot turn [B, 4] (4*B elements) into [8, -1]"), std::string::npos) << d.message;
}

TEST(TypeRules, ReshapeMakesAndUndoesProductsOfSymbols) {
  // What a dynamic batch's reshapes make: [B, 4] -> [4*B] -> [2*B, 2] -> [B, 4];
  // two symbols multiply (B*S), and a -1 takes what the known sizes leave.
  auto m = testing::parseOk(R"(
graph @g(%x: f32[B, 4], %y: f32[B, S, 8]) -> (f32[B, 4], f32[B*S, 8], f32[2*B*S, 4]) {
  %a = reshape(%x) {shape = [-1]}
  %b = reshape(%a) {shape = [2*B, 2]}
  %c = reshape(%b) {shape = [B, -1]}
  %d = reshape(%y) {shape = [-1, 8]}
  %e = reshape(%d) {shape = [S*B*2, 4]}
  return %c, %d, %e
})");
  ASSERT_TRUE(m);
  std::vector<std::string> types;
  for (const auto& n : m->entry()->body.nodes()) types.push_back(ir::toString(n->result()->type));
  EXPECT_EQ(types, (std::vector<std::string>{"f32[4*B]", "f32[2*B, 2]", "f32[B, 4]", "f32[B*S, 8]", "f32[2*B*S, 4]"}));
}

TEST(TypeRules, EveryOpHasARuleAndASchema) {
  for (const ir::OpInfo& op : ir::allOps()) {
    EXPECT_NE(op.rule, nullptr) << op.name;
    EXPECT_EQ(ir::lookupOp(op.name), op.id) << op.name;
  }
  EXPECT_EQ(ir::allOps().size(), 75u);  // every op of the language table
}

}  // namespace
}  // namespace graphc
