// The op type rules: broadcasting over static and symbolic dims, matmul's
// vector cases, reshape's -1 with symbols.
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "ir/Diagnostics.h"
#include "ir/ShapeRules.h"
#include "ir/SizeMath.h"

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

TEST(SizeSums, AreCanonicalWhateverTheirOrigin) {
  auto parse = [](std::string_view text) { return ir::parseDim(text); };
  // One text for one size: terms sorted, the constant last, the common
  // factor out in front.
  EXPECT_EQ(ir::toString(*parse("(1+P)")), "(P+1)");
  EXPECT_EQ(ir::toString(*parse("(2*P+2)")), "2*(P+1)");
  EXPECT_EQ(*parse("2*(P+1)"), *parse("(2+P*2)"));
  EXPECT_EQ(ir::toString(*parse("(S*B-P+3)")), "(B*S-P+3)");
  EXPECT_EQ(ir::toString(*parse("(P+1-1)")), "P");  // a sum that cancels is a product again
  EXPECT_EQ(ir::toString(*parse("(4-2-2)")), "0");
  EXPECT_EQ(*ir::add(Dim::sym("P"), Dim::of(1)), *parse("(P+1)"));
  EXPECT_EQ(*ir::subtract(*parse("(P+1)"), Dim::of(1)), Dim::sym("P"));
  EXPECT_EQ(*ir::multiply(*parse("(P+1)"), Dim::of(3)), *parse("3*(P+1)"));
  EXPECT_EQ(*ir::multiply(*parse("(P+1)"), Dim::sym("B")), *parse("(B*P+B)"));
  EXPECT_EQ(*ir::divide(*parse("(B*P+B)"), Dim::sym("B")), *parse("(P+1)"));
  EXPECT_EQ(*ir::divide(*parse("4*(P+1)"), *parse("2*(P+1)")), Dim::of(2));
  EXPECT_FALSE(ir::divide(*parse("(P+1)"), Dim::of(2)));
  // A sum may be negative for some sizes (checked when they are bound), but
  // not for all: that is no size.
  EXPECT_EQ(ir::toString(*ir::subtract(Dim::of(1), Dim::sym("P"))), "(-P+1)");
  EXPECT_FALSE(parse("(-P-1)"));
  EXPECT_FALSE(ir::subtract(Dim::of(1), Dim::of(2)));
  EXPECT_FALSE(parse("(P+"));
  EXPECT_FALSE(parse("(P+1"));
  EXPECT_FALSE(parse("P+1"));  // a sum is written in parentheses
}

TEST(SizeSums, HaveValuesOnceTheirSymbolsAreBound) {
  const ir::SymbolBindings sizes{{"B", 3}, {"P", 7}};
  EXPECT_EQ(ir::evaluate(*ir::parseDim("2*(B*P-P+1)"), sizes), 30);
  EXPECT_EQ(ir::factorValue("(P-7)", sizes), 0);
  EXPECT_FALSE(ir::factorValue("(P-8)", sizes));  // negative: no size
  EXPECT_FALSE(ir::factorValue("(P+Q)", sizes));  // Q unbound
  EXPECT_EQ(ir::symbolsOf(*ir::parseDim("(B*S+P)")), (std::vector<std::string>{"B", "P", "S"}));
  EXPECT_EQ(ir::toString(ir::substitute(ir::TensorType{ir::DType::F32, {*ir::parseDim("(P+Q)")}}, {{"Q", 2}})),
            "f32[(P+2)]");
  EXPECT_THROW(ir::checkedValue(*ir::parseDim("(P-8)"), sizes, "a test"), ir::Error);
}

TEST(SizeSums, ComeFromConcatAndSlicesOfSymbolicDims) {
  auto m = testing::parseOk(R"(
graph @g(%past: f32[B, P, 4], %new: f32[B, 1, 4]) -> (f32[B, (P+1), 4]) {
  %c = concat(%past, %new) {dim = 1}
  %s = slice(%c) {dim = 1, start = 1}
  %t = slice(%c) {dim = 1, start = 0, end = -2}
  %u = concat(%c, %s, %t) {dim = 1}
  %r = reshape(%u) {shape = [B, -1]}
  return %c
})");
  ASSERT_TRUE(m);
  std::vector<std::string> types;
  for (const auto& n : m->entry()->body.nodes()) types.push_back(ir::toString(n->result()->type));
  EXPECT_EQ(types, (std::vector<std::string>{"f32[B, (P+1), 4]", "f32[B, P, 4]", "f32[B, (P-1), 4]", "f32[B, 3*P, 4]",
                                             "f32[B, 12*P]"}));
  auto d = testing::parseError(R"(
graph @g(%x: f32[S]) -> (f32[2]) {
  %y = slice(%x) {dim = 0, start = 1, end = 3}
  return %y
})");
  EXPECT_NE(d.message.find("'slice' of the symbolic size S"), std::string::npos) << d.message;
  // A sum binds no symbol: P must come from another input.
  auto unbound = testing::parseError(R"(
graph @g(%x: f32[(P+1)]) -> (f32[(P+1)]) {
  return %x
})");
  EXPECT_NE(unbound.message.find("symbolic size 'P'"), std::string::npos) << unbound.message;
}

TEST(TypeRules, EveryOpHasARuleAndASchema) {
  for (const ir::OpInfo& op : ir::allOps()) {
    EXPECT_NE(op.rule, nullptr) << op.name;
    EXPECT_EQ(ir::lookupOp(op.name), op.id) << op.name;
  }
  EXPECT_EQ(ir::allOps().size(), 96u);  // every op of the language table
}

}  // namespace
}  // namespace graphc
