// The parser: structure it builds, literal operands, located diagnostics,
// and the printer's fixed point.
#include <bit>
#include <cstring>

#include <gtest/gtest.h>

#include "TestUtil.h"
#include "ir/Printer.h"

namespace graphc {
namespace {

TEST(Parser, BuildsGraphWithRegions) {
  auto m = testing::parseOk(R"(
graph @helper(%x: f32[2]) -> (f32[2]) {
  return %x
}
graph @main(%p: bool[], %x: f32[B, 4]) -> (f32[B, 4]) {
  %y = cond(%p, %x) then(%a: f32[B, 4]) {
    %r = relu(%a)
    return %r
  } else(%a: f32[B, 4]) {
    %n = neg(%a)
    return %n
  }
  return %y
})");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->graphs.size(), 2u);
  const ir::Graph* g = m->entry();
  EXPECT_EQ(g->name, "main");  // @main wins over the first graph
  ASSERT_EQ(g->body.nodes().size(), 1u);
  const ir::Node& cond = *g->body.nodes()[0];
  EXPECT_EQ(cond.op, ir::OpId::Cond);
  ASSERT_EQ(cond.regions().size(), 2u);
  EXPECT_EQ(cond.regions()[1]->label, "else");
  EXPECT_EQ(cond.regions()[0]->nodes()[0]->op, ir::OpId::Relu);
  EXPECT_EQ(ir::toString(cond.result()->type), "f32[B, 4]");
}

TEST(Parser, LiteralOperandsTakeTheOtherOperandsDType) {
  auto m = testing::parseOk(R"(
graph @g(%x: f16[3], %c: bool[3], %i: i32[3]) -> (f16[3], i32[3]) {
  %y = mul(%x, 0.5)
  %z = where(%c, 2, %x)
  %k = add(%i, 7)
  return %z, %k
})");
  ASSERT_TRUE(m);
  const auto& nodes = m->entry()->body.nodes();
  ASSERT_EQ(nodes.size(), 6u);  // three literals became constants
  EXPECT_EQ(nodes[0]->op, ir::OpId::Constant);
  EXPECT_EQ(ir::toString(nodes[0]->result()->type), "f16[]");
  EXPECT_EQ(nodes[0]->attrs.find("value")->f, 0.5);
  EXPECT_EQ(ir::toString(nodes[2]->result()->type), "f16[]");
  EXPECT_EQ(nodes[2]->attrs.find("value")->kind, ir::Attribute::Kind::Float);  // 2 became 2.0 for f16
  EXPECT_EQ(ir::toString(nodes[4]->result()->type), "i32[]");
  EXPECT_EQ(nodes[4]->attrs.find("value")->i, 7);
}

TEST(Parser, ErrorsCarryLineColumnSourceAndCaret) {
  ir::DiagnosticEngine diags;
  auto m =
      frontend::parseString("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%q)\n  return %y\n}\n", diags, "f.graph");
  EXPECT_FALSE(m);
  ASSERT_EQ(diags.all().size(), 1u);
  EXPECT_EQ(ir::format(diags.all()[0]),
            "f.graph:2:13: error: use of undefined value '%q'\n"
            "    %y = relu(%q)\n"
            "              ^\n");
}

TEST(Parser, RedefinitionHasNoteAtFirstDefinition) {
  ir::Diagnostic d = testing::parseError("graph @g(%x: f32[4]) -> (f32[4]) {\n  %x = relu(%x)\n  return %x\n}\n");
  EXPECT_EQ(d.message, "redefinition of value '%x'");
  EXPECT_EQ(d.loc.line, 2);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].loc.line, 1);
  EXPECT_EQ(d.notes[0].loc.col, 10);
}

TEST(Parser, DeepNestingIsRejectedNotCrashing) {
  std::string list(100000, '[');
  ir::Diagnostic d = testing::parseError("graph @g() -> (f32[]) {\n  %c = constant() {value = " + list);
  EXPECT_EQ(d.message, "attribute value is nested too deeply");
}

TEST(Parser, EveryAttributeKindRoundTrips) {
  const std::string text = R"(graph @g(%x: f32[B, 4]) -> (f32[B, 4]) {
  %c = constant() {value = [[1.5, -2.0], [inf, 1e-30]]} : f32[2, 2]
  %n = constant() {value = nan} : f64[]
  %s = gelu(%x) {approximate = "tanh"} : f32[B, 4]
  %r = reshape(%x) {shape = [B, 2, 2]} : f32[B, 2, 2]
  %k = cast(%x) {dtype = bf16} : bf16[B, 4]
  %t = sum(%x) {dims = [0], keepdim = true} : f32[1, 4]
  %f = fused(%x) {kind = "odd \"kind\"\\\n\x01", name = "k0"} body(%a: f32[B, 4]) {
    return %a
  } : f32[B, 4]
  return %f
}
)";
  auto m = testing::parseOk(text);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->body.nodes()[6]->attrs.find("kind")->s, "odd \"kind\"\\\n\x01");
  std::string printed = ir::print(*m);
  EXPECT_EQ(printed, text);
  auto again = testing::parseOk(printed);
  ASSERT_TRUE(again);
  EXPECT_EQ(ir::print(*again), printed);
}

TEST(Parser, PrinterNamesUnnamedValues) {
  auto m = testing::parseOk("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = add(%x, 1)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(ir::print(*m),
            "graph @g(%x: f32[4]) -> (f32[4]) {\n"
            "  %0 = constant() {value = 1.0} : f32[]\n"
            "  %y = add(%x, %0) : f32[4]\n"
            "  return %y\n"
            "}\n");
}

TEST(Parser, SplitInputFileKeepsLineNumbers) {
  ir::SourceBuffer whole{"f.graph", "a\n// -----\nb\nc\n  // -----  \nd\n", 1};
  auto chunks = frontend::splitInputFile(whole);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[1]->firstLine, 3);
  EXPECT_EQ(chunks[1]->lineText(4), "c");
  EXPECT_EQ(chunks[2]->firstLine, 6);
  EXPECT_EQ(chunks[2]->text, "d\n");
}

}  // namespace
}  // namespace graphc

namespace graphc {
namespace {

/// 100 f32 weights with a NaN payload and a negative zero among them.
ir::Attribute weights(std::vector<float>& storage) {
  storage.resize(100);
  for (size_t k = 0; k < storage.size(); ++k) storage[k] = static_cast<float>(k) * 0.25f - 3.0f;
  storage[7] = std::bit_cast<float>(0x7fc01234u);
  storage[9] = -0.0f;
  return ir::Attribute::ofDense(ir::DType::F32, {4, 25}, {}, reinterpret_cast<const std::byte*>(storage.data()),
                                storage.size() * sizeof(float));
}

TEST(DenseValue, PrintsAndParsesBackByteForByte) {
  std::vector<float> storage;
  const std::string text =
      "graph @g() -> (f32[4, 25]) {\n  %w = constant() {value = " + ir::toString(weights(storage)) +
      "} : f32[4, 25]\n  return %w\n}\n";
  auto m = testing::parseOk(text);
  ASSERT_TRUE(m);
  const ir::Attribute& back = *m->entry()->body.nodes()[0]->attrs.find("value");
  ASSERT_EQ(back.kind, ir::Attribute::Kind::Dense);
  EXPECT_EQ(back.dense->shape, (std::vector<int64_t>{4, 25}));
  ASSERT_EQ(back.dense->nbytes, storage.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(back.dense->data, storage.data(), back.dense->nbytes), 0);
  EXPECT_EQ(ir::print(*m), text);
}

TEST(DenseValue, ComparesByContentAndCopiesShareTheBytes) {
  std::vector<float> a, b;
  const ir::Attribute x = weights(a), y = weights(b);
  EXPECT_EQ(x, y);  // different buffers, same bytes
  b[50] = 1e9f;     // y views b
  EXPECT_FALSE(x == y);
  const ir::Attribute copy = x;
  EXPECT_EQ(copy.dense->data, x.dense->data);
  EXPECT_FALSE(x.dense->isSplat());
  EXPECT_EQ(x.dense->element(9).f, 0.0);
  EXPECT_TRUE(std::signbit(x.dense->element(9).f));
  EXPECT_EQ(ir::firstElement(x)->f, -3.0);
}

TEST(DenseValue, HumanFacingTextElidesLargeValues) {
  std::vector<float> storage;
  const ir::Attribute w = weights(storage);
  EXPECT_EQ(ir::toString(w, ir::dumpTextOptions()), "dense<f32[4, 25], __elided__>");
  EXPECT_EQ(ir::toString(w, ir::dumpTextOptions(true)), ir::toString(w));
  const ir::Diagnostic d = testing::parseError(
      "graph @g() -> (f32[4, 25]) {\n  %w = constant() {value = dense<f32[4, 25], __elided__>} : f32[4, 25]\n"
      "  return %w\n}\n");
  EXPECT_EQ(d.loc.line, 2);
  EXPECT_NE(d.message.find("--print-weights"), std::string::npos) << d.message;
}

}  // namespace
}  // namespace graphc
