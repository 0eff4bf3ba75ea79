// The ONNX importer on models built here with the protobuf API: what it
// makes of initializers, inputs, symbolic dims, names, If and shapes known
// at import time; and one test per class of model it rejects, each
// checking the message, its place in the listing and, for what graphc does
// not support, the feature the conformance report counts.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <variant>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "TestUtil.h"
#include "frontend/api/Api.h"
#include "frontend/onnx/ImportContext.h"
#include "frontend/onnx/OnnxImporter.h"
#include "ir/Printer.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;

using Dim = std::variant<int64_t, std::string>;

onnx::ValueInfoProto valueInfo(const std::string& name, int32_t elemType, const std::vector<Dim>& dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* tensor = v.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elemType);
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d))
      dim->set_dim_value(std::get<int64_t>(d));
    else if (!std::get<std::string>(d).empty())
      dim->set_dim_param(std::get<std::string>(d));
  }
  return v;
}

onnx::TensorProto floats(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

onnx::TensorProto int64s(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

onnx::NodeProto* addNode(onnx::GraphProto& g, const std::string& op, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name = "") {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

void intAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

/// A model around `g`, opset 17 of the default domain.
std::string model(const onnx::GraphProto& g, int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  *m.mutable_graph() = g;
  return m.SerializeAsString();
}

struct Imported {
  frontend::OnnxImport result;
  std::string errors;
};

Imported import(const std::string& bytes, frontend::OnnxImportOptions options = {}) {
  ir::DiagnosticEngine diags;
  Imported out{frontend::importOnnx(bytes, "model.onnx", diags, options), ""};
  for (const ir::Diagnostic& d : diags.all()) out.errors += ir::format(d);
  return out;
}

/// x: f32[batch, 4] → relu(Gemm(x, W, b, transB)) with W [3, 4], b [3].
onnx::GraphProto mlpGraph() {
  onnx::GraphProto g;
  g.set_name("mlp");
  *g.add_input() = valueInfo("input.1", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{4}});
  *g.add_initializer() = floats("fc.weight", {3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1});
  *g.add_initializer() = floats("fc.bias", {3}, {0.5f, -10, 0});
  intAttr(addNode(g, "Gemm", {"input.1", "fc.weight", "fc.bias"}, {"onnx::Relu_3"}, "fc"), "transB", 1);
  addNode(g, "Relu", {"onnx::Relu_3"}, {"4"}, "relu");
  *g.add_output() = valueInfo("4", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{3}});
  return g;
}

TEST(OnnxImport, InitializersBecomeConstantsAndGemmALinearThatFusesWithItsRelu) {
  Imported m = import(model(mlpGraph()));
  ASSERT_TRUE(m.result.module) << m.errors;
  const std::string text = ir::print(*m.result.module);
  // Names become identifiers; dim_params symbols.
  EXPECT_NE(text.find("graph @mlp(%input.1: f32[batch, 4]) -> (f32[batch, 3])"), std::string::npos) << text;
  EXPECT_NE(text.find("%onnx__Relu_3 = linear(%input.1, %fc.weight, %fc.bias)"), std::string::npos) << text;
  EXPECT_NE(text.find("%_4 = relu(%onnx__Relu_3)"), std::string::npos) << text;
  EXPECT_EQ(m.result.inputNames, std::vector<std::string>{"input.1"});

  Executable exe = compile(Graph(std::move(m.result.module)), {.device = Device::Cpu});
  int kernels = 0;
  for (const auto& n : exe.optimized().entry().body.nodes()) kernels += n->op == ir::OpId::Fused;
  EXPECT_EQ(kernels, 1) << exe.optimized().text();
  Tensor x(DType::F32, {2, 4});
  for (int64_t i = 0; i < 8; ++i) x.setDouble(i, static_cast<double>(i));
  Tensor y = exe.run({x})[0];
  const std::vector<double> want = {0.5, 0, 0, 4.5, 0, 0};  // x0+0.5, x1-10, x2-x3, per row
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(y.getDouble(i), want[static_cast<size_t>(i)]) << i;
}

TEST(OnnxImport, AnEmptyInitializerIsAFullOfItsType) {
  // A nested-list constant cannot spell [0, 3]: it becomes full() : f32[0, 3].
  onnx::GraphProto g;
  g.set_name("empty");
  *g.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  *g.add_initializer() = floats("nothing", {0, 3}, {});
  intAttr(addNode(g, "Concat", {"x", "nothing"}, {"y"}), "axis", 0);
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  Imported m = import(model(g));
  ASSERT_TRUE(m.result.module) << m.errors;
  EXPECT_NE(ir::print(*m.result.module).find("%nothing = full() {value = 0.0} : f32[0, 3]"), std::string::npos)
      << ir::print(*m.result.module);
}

TEST(OnnxImport, UnnamedDynamicDimsBecomeFreshSymbols) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {std::string(""), int64_t{2}});
  addNode(g, "Neg", {"x"}, {"y"});
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {std::string(""), int64_t{2}});
  Imported m = import(model(g));
  ASSERT_TRUE(m.result.module) << m.errors;
  EXPECT_EQ(ir::toString(m.result.module->entry()->body.param(0)->type), "f32[d0, 2]");
}

/// y = If(sum(x) > 0) then x * s else x - s: s is read from the outer scope.
onnx::GraphProto ifGraph(bool knownCondition) {
  onnx::GraphProto g;
  g.set_name("branchy");
  *g.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {int64_t{3}});
  *g.add_input() = valueInfo("s", onnx::TensorProto::FLOAT, {int64_t{3}});
  if (knownCondition) {
    onnx::TensorProto yes;
    yes.set_name("c");
    yes.set_data_type(onnx::TensorProto::BOOL);
    yes.add_int32_data(1);
    *g.add_initializer() = yes;
  } else {
    addNode(g, "ReduceSum", {"x"}, {"total"});
    *g.add_initializer() = floats("zero", {}, {0});
    addNode(g, "Greater", {"total", "zero"}, {"c"});
  }
  onnx::NodeProto* n = addNode(g, "If", {"c"}, {"y"}, "choose");
  for (auto [attr, op] : {std::pair{"then_branch", "Mul"}, std::pair{"else_branch", "Sub"}}) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* branch = a->mutable_g();
    branch->set_name(attr);
    addNode(*branch, op, {"x", "s"}, {std::string(attr) + "_out"});
    *branch->add_output() = valueInfo(std::string(attr) + "_out", onnx::TensorProto::FLOAT, {int64_t{3}});
  }
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {int64_t{3}});
  return g;
}

TEST(OnnxImport, IfBecomesACondWithItsOuterValuesAsOperands) {
  Imported m = import(model(ifGraph(false)));
  ASSERT_TRUE(m.result.module) << m.errors;
  const std::string text = ir::print(*m.result.module);
  // The [1] condition is reshaped to the scalar cond takes.
  EXPECT_NE(text.find("%y = cond(%0, %x, %s) then(%x: f32[3], %s: f32[3])"), std::string::npos) << text;
  const Graph g(std::move(m.result.module));
  Tensor x(DType::F32, {3}), s(DType::F32, {3});
  for (int64_t i = 0; i < 3; ++i) {
    x.setDouble(i, static_cast<double>(i + 1));
    s.setDouble(i, 2);
  }
  for (Device d : {Device::Reference, Device::Cpu}) {
    Tensor taken = compile(g, {.device = d}).run({x, s})[0];  // sum 6 > 0: x * s
    EXPECT_EQ(taken.getDouble(2), 6) << deviceName(d);
    Tensor negative(DType::F32, {3});
    for (int64_t i = 0; i < 3; ++i) negative.setDouble(i, -x.getDouble(i));
    Tensor other = compile(g, {.device = d}).run({negative, s})[0];  // x - s
    EXPECT_EQ(other.getDouble(2), -5) << deviceName(d);
  }
}

TEST(OnnxImport, AnIfOnAKnownConditionIsTheTakenBranch) {
  Imported m = import(model(ifGraph(true)));
  ASSERT_TRUE(m.result.module) << m.errors;
  const std::string text = ir::print(*m.result.module);
  EXPECT_EQ(text.find("cond("), std::string::npos) << text;
  EXPECT_NE(text.find("mul(%x, %s)"), std::string::npos) << text;
}

/// Reshape(x, shape) where shape is a graph input.
onnx::GraphProto reshapeGraph() {
  onnx::GraphProto g;
  g.set_name("r");
  *g.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{6}});
  *g.add_input() = valueInfo("shape", onnx::TensorProto::INT64, {int64_t{2}});
  addNode(g, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {int64_t{3}, int64_t{4}});
  return g;
}

TEST(OnnxImport, AGraphInputAnOpNeedsIsSpecialisedOnTheValueGiven) {
  runtime::Tensor shape(DType::I64, {2});
  shape.setInt(0, 3);
  shape.setInt(1, -1);
  Imported m = import(model(reshapeGraph()), {.knownInputs = {{"shape", shape}}});
  ASSERT_TRUE(m.result.module) << m.errors;
  EXPECT_EQ(m.result.inputNames, std::vector<std::string>{"x"});
  EXPECT_EQ(m.result.specialised, std::vector<std::string>{"shape"});
  EXPECT_EQ(ir::toString(m.result.module->entry()->resultTypes[0]), "f32[3, 4]");
  EXPECT_EQ(m.result.module->entry()->body.params().size(), 1u);
}

TEST(OnnxImport, ShapesWithSymbolicSizesReachReshape) {
  // y = Reshape(x, Concat(Shape(x)[0:1], [-1])): x f32[N, 2, 3] → f32[N, 6].
  onnx::GraphProto g;
  g.set_name("flatten");
  *g.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{2}, int64_t{3}});
  *g.add_initializer() = int64s("zero", {1}, {0});
  *g.add_initializer() = int64s("one", {1}, {1});
  *g.add_initializer() = int64s("rest", {1}, {-1});
  addNode(g, "Shape", {"x"}, {"s"});
  addNode(g, "Slice", {"s", "zero", "one"}, {"n"});
  addNode(g, "Concat", {"n", "rest"}, {"target"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  addNode(g, "Reshape", {"x", "target"}, {"y"});
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{6}});
  Imported m = import(model(g));
  ASSERT_TRUE(m.result.module) << m.errors;
  EXPECT_EQ(ir::toString(m.result.module->entry()->resultTypes[0]), "f32[N, 6]");

  // The same shape used as data is a clear error.
  onnx::GraphProto asData = g;
  asData.mutable_output(0)->CopyFrom(valueInfo("s", onnx::TensorProto::INT64, {int64_t{3}}));
  Imported bad = import(model(asData));
  EXPECT_FALSE(bad.result.module);
  EXPECT_NE(bad.errors.find("'s' is the shape of a tensor with symbolic sizes"), std::string::npos) << bad.errors;
  EXPECT_EQ(bad.result.unsupported, std::vector<std::string>{"symbolic shape as data"});
}

TEST(OnnxImport, ALongChainOfFoldedShapeArithmeticDoesNotRecurse) {
  onnx::GraphProto g;
  g.set_name("chain");
  *g.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {int64_t{12}});
  *g.add_initializer() = int64s("v0", {1}, {12});
  *g.add_initializer() = int64s("zero", {1}, {0});
  const int n = 20000;
  for (int k = 0; k < n; ++k) addNode(g, "Add", {"v" + std::to_string(k), "zero"}, {"v" + std::to_string(k + 1)});
  addNode(g, "Reshape", {"x", "v" + std::to_string(n)}, {"y"});
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {int64_t{12}});
  Imported m = import(model(g));
  ASSERT_TRUE(m.result.module) << m.errors;
}

onnx::GraphProto geluGraph(const std::string& approximate) {
  onnx::GraphProto g;
  g.set_name("gelu");
  *g.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {int64_t{4}});
  onnx::NodeProto* n = addNode(g, "Gelu", {"x"}, {"y"});
  auto* a = n->add_attribute();
  a->set_name("approximate");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(approximate);
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {int64_t{4}});
  return g;
}

TEST(OnnxImport, GeluOfOpset20KeepsItsApproximation) {
  Imported m = import(model(geluGraph("tanh"), 20));
  ASSERT_TRUE(m.result.module) << m.errors;
  EXPECT_NE(ir::print(*m.result.module).find("%y = gelu(%x) {approximate = \"tanh\"}"), std::string::npos);
}

// ---- what the importer rejects ----------------------------------------------

/// The import fails; its first diagnostic contains `message`, located at
/// `line:col` of the listing; `feature` is the unsupported feature reported
/// (empty: a malformed model, not an unsupported one).
void expectRejected(const std::string& bytes, const std::string& message, const std::string& where,
                    const std::string& feature = "", frontend::OnnxImportOptions options = {}) {
  Imported m = import(bytes, options);
  EXPECT_FALSE(m.result.module);
  EXPECT_NE(m.errors.find("model.onnx:" + where + ": error: " + message), std::string::npos) << m.errors;
  EXPECT_EQ(m.result.unsupported.empty() ? "" : m.result.unsupported.front(), feature) << m.errors;
}

/// y = If(c) then (If(c) then ... x + 1 ...) else x, `depth` Ifs deep.
onnx::GraphProto nestedIfGraph(int depth) {
  onnx::GraphProto inner;
  inner.set_name("innermost");
  *inner.add_initializer() = floats("one", {}, {1});
  addNode(inner, "Add", {"x", "one"}, {"level0"});
  *inner.add_output() = valueInfo("level0", onnx::TensorProto::FLOAT, {int64_t{3}});
  for (int level = 1; level <= depth; ++level) {
    onnx::GraphProto outer;
    outer.set_name(fmt::format("level{}", level));
    if (level == depth) {
      *outer.add_input() = valueInfo("c", onnx::TensorProto::BOOL, {});
      *outer.add_input() = valueInfo("x", onnx::TensorProto::FLOAT, {int64_t{3}});
    }
    const std::string out = fmt::format("level{}", level);
    onnx::NodeProto* n = addNode(outer, "If", {"c"}, {out}, fmt::format("if{}", level));
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = inner;
    auto* b = n->add_attribute();
    b->set_name("else_branch");
    b->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* other = b->mutable_g();
    other->set_name("else");
    addNode(*other, "Identity", {"x"}, {"else_out"});
    *other->add_output() = valueInfo("else_out", onnx::TensorProto::FLOAT, {int64_t{3}});
    *outer.add_output() = valueInfo(out, onnx::TensorProto::FLOAT, {int64_t{3}});
    inner = std::move(outer);
  }
  return inner;
}

/// Protobuf's default recursion limit once cut nested Ifs off at 32 levels
/// as "truncated or not ONNX"; they nest to the .graph parser's 64 now,
/// and deeper is refused by name.
TEST(OnnxImport, IfsNestSixtyFourDeepAndDeeperIsANamedLimit) {
  Imported m = import(model(nestedIfGraph(40)));
  ASSERT_TRUE(m.result.module) << m.errors;
  Tensor c(DType::Bool, {}), x(DType::F32, {3});
  c.setInt(0, 1);
  EXPECT_EQ(compile(Graph(std::move(m.result.module)), {.device = Device::Cpu}).run({c, x})[0].getDouble(0), 1);
  EXPECT_TRUE(import(model(nestedIfGraph(64))).result.module);
  expectRejected(model(nestedIfGraph(65)), "the model nests subgraphs (If branches) more than 64 deep", "1:1");
  expectRejected(model(nestedIfGraph(300)), "the model nests subgraphs (If branches) more than 64 deep", "1:1");
}

TEST(OnnxImportRejects, BytesThatAreNotAModel) {
  expectRejected("not a protobuf \xff\xff\xff", "not a valid ONNX model", "1:1");
  const std::string whole = model(mlpGraph());
  expectRejected(whole.substr(0, whole.size() / 2), "not a valid ONNX model", "1:1");
  onnx::ModelProto empty;
  empty.add_opset_import()->set_version(17);
  expectRejected(empty.SerializeAsString(), "the ONNX model has no graph", "1:1");
}

TEST(OnnxImportRejects, AModelWithoutTheDefaultOpset) {
  onnx::ModelProto m;
  *m.mutable_graph() = mlpGraph();
  expectRejected(m.SerializeAsString(), "the model imports no opset of the default ONNX domain", "1:1");
}

TEST(OnnxImportRejects, AnUnsupportedOpNamingTheNodeAtItsLine) {
  onnx::GraphProto g = mlpGraph();
  addNode(g, "LSTM", {"4", "fc.weight"}, {"5"}, "lstm1");
  Imported m = import(model(g));
  EXPECT_FALSE(m.result.module);
  EXPECT_EQ(m.errors,
            "model.onnx:4:3: error: unsupported op 'LSTM' (node 'lstm1')\n    lstm1: LSTM(4, fc.weight) -> 5\n    ^\n");
  EXPECT_EQ(m.result.unsupported, std::vector<std::string>{"op LSTM"});
}

TEST(OnnxImportRejects, AnOpOfAnotherDomain) {
  onnx::GraphProto g = mlpGraph();
  addNode(g, "FusedGemm", {"4"}, {"5"}, "ms")->set_domain("com.microsoft");
  expectRejected(model(g), "unsupported op 'FusedGemm' of domain 'com.microsoft' (node 'ms')", "4:3",
                 "op com.microsoft.FusedGemm");
}

TEST(OnnxImportRejects, AnAttributeTheConverterDoesNotRead) {
  onnx::GraphProto g = mlpGraph();
  intAttr(g.mutable_node(1), "frobnicate", 1);
  expectRejected(model(g), "'Relu' attribute 'frobnicate' is not supported (node 'relu')", "3:3",
                 "Relu attribute frobnicate");
}

TEST(OnnxImportRejects, AnInputOfADTypeGraphcLacks) {
  onnx::GraphProto g = mlpGraph();
  *g.mutable_input(0) = valueInfo("input.1", onnx::TensorProto::UINT8, {int64_t{2}, int64_t{4}});
  expectRejected(model(g), "graph input 'input.1' has dtype uint8, which graphc does not support", "1:1",
                 "dtype uint8");
}

TEST(OnnxImportRejects, AnInputOfUnknownRankOrNotATensor) {
  onnx::GraphProto g = mlpGraph();
  g.mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  expectRejected(model(g), "graph input 'input.1' has no shape", "1:1", "input of unknown rank");
  g = mlpGraph();
  g.mutable_input(0)->mutable_type()->mutable_sequence_type();
  expectRejected(model(g), "graph input 'input.1' is a sequence", "1:1", "sequence input");
}

TEST(OnnxImportRejects, ANameUsedBeforeItIsDefined) {
  onnx::GraphProto g = mlpGraph();
  g.mutable_node(1)->set_input(0, "nowhere");
  expectRejected(model(g),
                 "'nowhere' is used before it is defined (ONNX lists nodes in topological order) (node 'relu')", "3:3");
}

TEST(OnnxImportRejects, AMissingRequiredInput) {
  onnx::GraphProto g = mlpGraph();
  g.mutable_node(0)->set_input(1, "");
  expectRejected(model(g), "'Gemm': input 1 is required (node 'fc')", "2:3");
}

TEST(OnnxImport, AnIntegerClipBoundPastInt64Saturates) {  // a fuzzer finding: the cast was undefined
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = valueInfo("x", onnx::TensorProto::INT64, {int64_t{3}});
  onnx::NodeProto* clip = addNode(g, "Clip", {"x"}, {"y"}, "clip");
  onnx::AttributeProto* max = clip->add_attribute();
  max->set_name("max");
  max->set_type(onnx::AttributeProto::FLOAT);
  max->set_f(4.25e37f);
  *g.add_output() = valueInfo("y", onnx::TensorProto::INT64, {int64_t{3}});
  Imported m = import(model(g, 6));
  ASSERT_TRUE(m.result.module) << m.errors;
  EXPECT_NE(ir::print(*m.result.module).find("max = 9223372036854775807"), std::string::npos)
      << ir::print(*m.result.module);
}

TEST(OnnxImportRejects, AConcatOfNothing) {  // a fuzzer finding: parts[0] of no parts
  onnx::GraphProto g;
  g.set_name("g");
  intAttr(addNode(g, "Concat", {}, {"y"}, "join"), "axis", 0);
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {int64_t{2}});
  expectRejected(model(g), "'Concat': input 0 is required (node 'join')", "2:3");
}

TEST(OnnxImportRejects, AShapeInputThatIsNotThere) {  // a fuzzer finding: no input at all once read past the end
  onnx::GraphProto g;
  g.set_name("g");
  addNode(g, "ConstantOfShape", {}, {"y"}, "fill");
  *g.add_output() = valueInfo("y", onnx::TensorProto::FLOAT, {int64_t{2}});
  expectRejected(model(g),
                 "'ConstantOfShape': the shape ('') must be known when the graph is built: an initializer, a "
                 "Constant, or computed from them (node 'fill')",
                 "2:3");
}

TEST(OnnxImportRejects, OperandsGraphcsTypeRulesReject) {
  onnx::GraphProto g = mlpGraph();
  *g.add_initializer() = int64s("k", {3}, {1, 2, 3});
  addNode(g, "Add", {"4", "k"}, {"5"}, "mixed");
  expectRejected(model(g), "'Add': operand dtypes of 'add' differ: f32 vs i64", "4:3");
}

TEST(OnnxImportRejects, AnOutputOfAnotherTypeThanDeclared) {
  onnx::GraphProto g = mlpGraph();
  *g.mutable_output(0) = valueInfo("4", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{5}});
  expectRejected(model(g), "graph output '4' is declared of shape [batch, 5], the graph computes f32[batch, 3]", "1:1");
  *g.mutable_output(0) = valueInfo("4", onnx::TensorProto::DOUBLE, {std::string("batch"), int64_t{3}});
  expectRejected(model(g), "graph output '4' is declared double, the graph computes f32[batch, 3]", "1:1");
}

TEST(OnnxImportRejects, TensorsWhoseDataDoesNotMatchTheirDims) {
  onnx::GraphProto g = mlpGraph();
  *g.mutable_initializer(1) = floats("fc.bias", {4}, {1, 2, 3});
  expectRejected(model(g), "initializer 'fc.bias': holds 3 values, its dims say 4", "2:3");
  // Huge dims without data: an error, not an allocation.
  *g.mutable_initializer(1) = floats("fc.bias", {1 << 30, 1 << 30}, {});
  expectRejected(model(g), "initializer 'fc.bias': holds 0 values, its dims say 1152921504606846976", "2:3");
  onnx::TensorProto raw;
  raw.set_name("fc.bias");
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(3);
  raw.set_raw_data(std::string(11, '\0'));
  *g.mutable_initializer(1) = raw;
  expectRejected(model(g), "initializer 'fc.bias': raw_data has 11 bytes, 3 elements of f32 need 4 bytes each", "2:3");
}

/// The MLP with its bias [3] in an external file: `location`, at `offset`
/// (and `length` when not negative).
onnx::GraphProto externalBiasGraph(const std::string& location, int64_t offset, int64_t length = -1) {
  onnx::GraphProto g = mlpGraph();
  onnx::TensorProto* bias = g.mutable_initializer(1);
  bias->clear_float_data();
  bias->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* entry = bias->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return g;
}

/// A folder holding `weights.bin`: 8 bytes of padding, then the floats 0.5, -1, 2.
fs::path externalDataFolder(const std::string& name) {
  const fs::path folder = fs::path(::testing::TempDir()) / name;
  fs::remove_all(folder);
  fs::create_directories(folder);
  const float values[] = {0.5f, -1.0f, 2.0f};
  std::string bytes(8, '\0');
  bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
  std::ofstream(folder / "weights.bin", std::ios::binary) << bytes;
  return folder;
}

TEST(OnnxImport, ReadsExternalDataFromTheModelsFolder) {
  const fs::path folder = externalDataFolder("graphc-external-data");
  Imported m = import(model(externalBiasGraph("weights.bin", 8, 12)), {.dataFolder = folder.string()});
  ASSERT_TRUE(m.result.module) << m.errors;
  EXPECT_NE(ir::print(*m.result.module).find("[0.5, -1.0, 2.0]"), std::string::npos) << ir::print(*m.result.module);
  // A model file's folder is where importOnnxFile looks.
  std::ofstream(folder / "model.onnx", std::ios::binary) << model(externalBiasGraph("weights.bin", 8));
  ir::DiagnosticEngine diags;
  EXPECT_TRUE(frontend::importOnnxFile((folder / "model.onnx").string(), diags).module);
}

TEST(OnnxImportRejects, ExternalDataOutsideTheModelsFolderOrFile) {
  const fs::path folder = externalDataFolder("graphc-external-data-hostile");
  const frontend::OnnxImportOptions options{.dataFolder = (folder / "models").string()};
  fs::create_directories(folder / "models");
  fs::create_symlink(folder / "weights.bin", folder / "models" / "link.bin");
  const std::string where = "2:3", what = "initializer 'fc.bias': ";
  expectRejected(model(externalBiasGraph((folder / "weights.bin").string(), 8)),
                 what + "external data location \"" + (folder / "weights.bin").string() + "\" is absolute", where, "",
                 options);
  expectRejected(model(externalBiasGraph("../weights.bin", 8)),
                 what + "external data location \"../weights.bin\" leaves the model's folder (it has '..')", where, "",
                 options);
  expectRejected(model(externalBiasGraph("link.bin", 8)),
                 what + "external data \"link.bin\" is reached through the symlink 'link.bin', which is refused", where,
                 "", options);
  fs::copy_file(folder / "weights.bin", folder / "models" / "weights.bin");
  expectRejected(model(externalBiasGraph("weights.bin", 12)),
                 what + "external data \"weights.bin\" has 20 bytes; the tensor needs [12, 12 + 12)", where, "",
                 options);
  expectRejected(model(externalBiasGraph("weights.bin", 8, 16)),
                 what + "external data length 16 differs from the 12 bytes its type needs", where, "", options);
  expectRejected(model(externalBiasGraph("missing.bin", 0)),
                 what + "external data \"missing.bin\" is not a readable file (No such file or directory)", where, "",
                 options);
  expectRejected(model(externalBiasGraph("weights.bin", 8)),
                 what + "the data is in an external file, and the model was not read from a folder", where);
}

TEST(OnnxImportRejects, ExternalDataThroughASymlinkOrNotInAPlainFile) {
  const fs::path folder = externalDataFolder("graphc-external-data-links");
  const frontend::OnnxImportOptions options{.dataFolder = (folder / "models").string()};
  fs::create_directories(folder / "models" / "real");
  fs::copy_file(folder / "weights.bin", folder / "models" / "real" / "weights.bin");
  // A symlink is refused even where it stays inside the folder: whether it
  // does can change between a check and the read.
  fs::create_directory_symlink("real", folder / "models" / "sub");
  fs::create_symlink("real/weights.bin", folder / "models" / "inside.bin");
  const std::string where = "2:3", what = "initializer 'fc.bias': ";
  expectRejected(model(externalBiasGraph("sub/weights.bin", 8)),
                 what + "external data \"sub/weights.bin\" is reached through the symlink 'sub', which is refused",
                 where, "", options);
  expectRejected(model(externalBiasGraph("inside.bin", 8)),
                 what + "external data \"inside.bin\" is reached through the symlink 'inside.bin', which is refused",
                 where, "", options);
  expectRejected(model(externalBiasGraph("real", 8)), what + "external data \"real\" is not a regular file", where, "",
                 options);
  expectRejected(model(externalBiasGraph("real/weights.bin/x", 8)),
                 what + "external data \"real/weights.bin/x\" is not a readable file (Not a directory)", where, "",
                 options);
  // A FIFO is refused without waiting for a writer.
  ASSERT_EQ(::mkfifo((folder / "models" / "fifo").c_str(), 0600), 0);
  expectRejected(model(externalBiasGraph("fifo", 8)), what + "external data \"fifo\" is not a regular file", where, "",
                 options);
  // "./" and doubled separators name the same plain file.
  Imported m = import(model(externalBiasGraph("./real//weights.bin", 8)), options);
  EXPECT_TRUE(m.result.module) << m.errors;
}

/// The folder is opened once: after the first external tensor is read,
/// swapping the model's folder for a symlink to another folder (what a
/// writer racing the import can do between a path check and an open) does
/// not redirect later reads. Reading by path, the second tensor came from
/// the other folder.
TEST(OnnxImport, ExternalDataIsReadFromTheFolderOpenedFirst) {
  const fs::path root = externalDataFolder("graphc-external-data-swap");
  const fs::path models = root / "models", outside = root / "outside";
  fs::create_directories(models);
  fs::create_directories(outside);
  auto writeFloats = [](const fs::path& file, float value) {
    const float values[] = {value, value, value};
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(values), sizeof(values));
  };
  writeFloats(models / "w.bin", 1.0f);
  writeFloats(outside / "w.bin", 666.0f);
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(3);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = proto.add_external_data();
  entry->set_key("location");
  entry->set_value("w.bin");
  const frontend::onnximport::ExternalData external(models.string());
  const runtime::Tensor first = external.read(proto, ir::DType::F32, {3}, "first");
  EXPECT_EQ(first.as<float>()[0], 1.0f);
  fs::rename(models, root / "models.real");
  fs::create_directory_symlink(outside, models);
  const runtime::Tensor second = external.read(proto, ir::DType::F32, {3}, "second");
  EXPECT_EQ(second.as<float>()[0], 1.0f) << "read through the swapped-in symlink";
}

/// A model file is parsed from its descriptor; a pipe is read whole
/// first; a directory, a truncated file and a FIFO nobody writes to are
/// errors or streams as before.
TEST(OnnxImport, ModelFilesParseFromTheFileAndFromStreams) {
  const fs::path folder = fs::path(::testing::TempDir()) / "graphc-model-files";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string bytes = model(mlpGraph());
  std::ofstream(folder / "mlp.onnx", std::ios::binary) << bytes;
  std::ofstream(folder / "cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  auto importFile = [](const fs::path& path) {
    ir::DiagnosticEngine diags;
    Imported out{frontend::importOnnxFile(path.string(), diags), ""};
    for (const ir::Diagnostic& d : diags.all()) out.errors += ir::format(d);
    return out;
  };
  Imported whole = importFile(folder / "mlp.onnx");
  ASSERT_TRUE(whole.result.module) << whole.errors;
  EXPECT_EQ(ir::print(*whole.result.module), ir::print(*import(bytes).result.module));
  Imported cut = importFile(folder / "cut.onnx");
  EXPECT_FALSE(cut.result.module);
  EXPECT_NE(cut.errors.find("cut.onnx:1:1: error: not a valid ONNX model"), std::string::npos) << cut.errors;
  EXPECT_NE(importFile(folder).errors.find("is a directory, not a file"), std::string::npos);
  // A FIFO: opened without waiting for the writer, then read as a stream.
  const fs::path fifo = folder / "pipe.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
  Imported streamed = importFile(fifo);
  writer.join();
  ASSERT_TRUE(streamed.result.module) << streamed.errors;
  EXPECT_EQ(ir::print(*streamed.result.module), ir::print(*whole.result.module));
}

TEST(OnnxImportRejects, AnIfWhoseBranchesDiffer) {
  onnx::GraphProto g = ifGraph(false);
  onnx::GraphProto* elseBranch = g.mutable_node(2)->mutable_attribute(1)->mutable_g();
  elseBranch->mutable_node(0)->set_op_type("Less");  // bool, not f32
  *elseBranch->mutable_output(0) = valueInfo("else_branch_out", onnx::TensorProto::BOOL, {int64_t{3}});
  expectRejected(model(g),
                 "'If': the branches of 'cond' return different types: then (f32[3]) vs else (bool[3]) (node 'choose')",
                 "4:3");
}

TEST(OnnxImportRejects, AnIfOnANonBoolCondition) {
  onnx::GraphProto g = ifGraph(false);
  g.mutable_node(2)->set_input(0, "total");
  expectRejected(model(g), "'If': the condition must be bool, it is f32[1] (node 'choose')", "4:3");
}

TEST(OnnxImportRejects, ASubgraphWithInputs) {
  onnx::GraphProto g = ifGraph(false);
  *g.mutable_node(2)->mutable_attribute(0)->mutable_g()->add_input() =
      valueInfo("i", onnx::TensorProto::FLOAT, {int64_t{1}});
  expectRejected(model(g), "subgraphs with inputs (Loop, Scan bodies) are not supported (node 'choose')", "4:3",
                 "subgraph inputs");
}

TEST(OnnxImportRejects, AnAttributeValueOutOfItsDomain) {
  expectRejected(model(geluGraph("erf"), 20),
                 "'Gelu': attribute 'approximate' must be \"none\" or \"tanh\", got \"erf\"", "2:3");
}

TEST(OnnxImportRejects, AShapeInputWithoutAValueOrWithAValueOfTheWrongType) {
  expectRejected(model(reshapeGraph()),
                 "'Reshape': the shape ('shape') must be known when the graph is built: it is computed from graph "
                 "input that can be given a value (--input shape=FILE)",
                 "2:3");
  // A shape computed from an input: the hint names the input, never the intermediate value.
  onnx::GraphProto g = reshapeGraph();
  *g.add_initializer() = int64s("one", {2}, {1, 1});
  g.clear_node();
  addNode(g, "Add", {"shape", "one"}, {"shape_plus_one"}, "add");
  addNode(g, "Reshape", {"x", "shape_plus_one"}, {"y"}, "reshape");
  expectRejected(model(g),
                 "'Reshape': the shape ('shape_plus_one') must be known when the graph is built: it is computed from "
                 "graph input that can be given a value (--input shape=FILE)",
                 "3:3");
  runtime::Tensor wrong(DType::I32, {2});
  expectRejected(model(reshapeGraph()),
                 "the value given for input 'shape' is i32[2], the model declares i64[2] (node 'reshape')", "2:3", "",
                 {.knownInputs = {{"shape", wrong}}});
}

TEST(OnnxImportRejects, TensorProtoFilesThatAreMalformedOrOfAnUnsupportedDType) {
  EXPECT_THROW(frontend::parseTensorProto("\xff\xff garbage", "in.pb"), ir::Error);
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::UINT16);
  t.add_dims(1);
  t.add_int32_data(7);
  try {
    frontend::parseTensorProto(t.SerializeAsString(), "in.pb");
    FAIL() << "a uint16 tensor was accepted";
  } catch (const frontend::OnnxUnsupported& e) {
    EXPECT_EQ(e.feature, "dtype uint16");
    EXPECT_NE(std::string(e.what()).find("in.pb: dtype uint16 is not supported"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, GraphLoadImportsOnnxFiles) {
  const std::string path = ::testing::TempDir() + "/graphc-onnx-load.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << model(mlpGraph());
  }
  Graph g = Graph::load(path);
  EXPECT_EQ(g.entry().name, "mlp");
  std::ofstream(path, std::ios::binary) << "truncated";
  EXPECT_THROW(Graph::load(path), CompileError);
}

}  // namespace
}  // namespace graphc
