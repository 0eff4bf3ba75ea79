// Results that update inputs in place (`-> (f32[4] updates %w)`): the
// text round-trips, misuse is rejected, the buffer plan writes into the
// input when nothing reads it afterwards and copies in at the end
// otherwise, and every backend's run, capture and replay leave in the
// caller's tensor what the reference interpreter computes (the pure
// oracle: interpret() returns results and writes nothing).
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/BufferAssignment.h"
#include "frontend/api/graphc.h"
#include "ir/Printer.h"
#include "runtime/Random.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

using runtime::Tensor;
using testing::allClose;
using testing::copiesOf;
using How = codegen::BufferAssignment::Update::How;

Tensor copyOf(const Tensor& t) {
  Tensor c(t.dtype(), t.shape());
  if (t.nbytes()) std::memcpy(c.data(), t.data(), t.nbytes());
  return c;
}

std::vector<Tensor> randomInputs(const ir::Graph& g, const ir::SymbolBindings& sizes, uint64_t seed,
                                 int64_t integers = -1) {
  std::vector<Tensor> out;
  for (const auto& p : g.body.params()) {
    out.push_back(runtime::randomTensor(p->type.dtype, runtime::concreteShape(ir::substitute(p->type, sizes)), seed++));
    if (integers >= 0 && !ir::isFloat(p->type.dtype))
      for (int64_t i = 0; i < out.back().numel(); ++i) out.back().setInt(i, integers);
  }
  return out;
}

const char* kDecodeStep = R"(graph @decode(%cache: f32[L, 64], %pos: i64[1, 1], %k: f32[1, 64], %q: f32[1, 64])
      -> (f32[L, 64] updates %cache, f32[1, L]) {
    %c2 = scatter_nd(%cache, %pos, %k)
    %s = linear(%q, %c2)
    %p = softmax(%s) {dim = -1}
    return %c2, %p
  })";

/// One step by the oracle: the results, and the inputs as the updates leave them.
struct Step {
  std::vector<Tensor> results, inputs;
};
Step oracleStep(const ir::Graph& g, const std::vector<Tensor>& inputs) {
  Step s{copiesOf(runtime::interpret(g, inputs)), copiesOf(inputs)};  // a returned input is its storage
  for (const ir::InputUpdate& u : g.inputUpdates)
    s.inputs[static_cast<size_t>(u.param->index())] = copyOf(s.results[u.result]);
  return s;
}

const testing::Tolerance kTol{1e-5, 1e-5};

struct Case {
  const char* name;
  const char* text;
  std::vector<How> plan;  // how each update is done, in result order
  ir::SymbolBindings sizes;
  int64_t integers = -1;  // when set, the value of every integer input (an index in range)
};

const Case kCases[] = {
    {"SgdMomentumWrittenInPlace",
     R"(graph @sgd(%w: f32[4, 3], %m: f32[4, 3], %g: f32[4, 3], %lr: f32[])
            -> (f32[4, 3] updates %w, f32[4, 3] updates %m) {
          %mm = mul(%m, 0.9)
          %m2 = add(%mm, %g)
          %step = mul(%lr, %m2)
          %w2 = sub(%w, %step)
          return %w2, %m2
        })",
     {How::Direct, How::Direct},
     {}},
    {"ReadAfterTheUpdateIsCopiedInAtTheEnd",
     R"(graph @g(%w: f32[8], %x: f32[8]) -> (f32[8] updates %w, f32[]) {
          %w2 = exp(%x)
          %s = sum(%w2) {dims = [0]}
          %t = mul(%w, %s)
          %r = sum(%t) {dims = [0]}
          return %w2, %r
        })",
     {How::Copy},
     {}},
    {"SwappedInputsAndAReturnedInput",
     R"(graph @swap(%a: f32[3], %b: f32[3]) -> (f32[3] updates %a, f32[3] updates %b, f32[3]) {
          return %b, %a, %a
        })",
     {How::Copy, How::Copy},
     {}},
    {"UnchangedInput",
     R"(graph @g(%a: f32[3], %b: f32[3]) -> (f32[3], f32[3] updates %a) {
          %c = add(%a, %b)
          return %c, %a
        })",
     {How::Unchanged},
     {}},
    {"ConstantUpdate",
     R"(graph @g(%a: f32[2], %b: f32[2]) -> (f32[2] updates %a, f32[2]) {
          %c = full() {value = 1.5} : f32[2]
          %d = add(%a, %b)
          return %c, %d
        })",
     {How::Copy},
     {}},
    {"GemmReadingItsOwnUpdateIsCopied",
     R"(graph @g(%w: f32[4, 4], %x: f32[4, 4]) -> (f32[4, 4] updates %w) {
          %y = matmul(%w, %x)
          %w2 = add(%y, %w)
          return %w2
        })",
     {How::Copy},
     {}},
    {"UpdateAlsoReturnedAsAPlainResult",
     R"(graph @g(%m: f32[5], %g: f32[5]) -> (f32[5] updates %m, f32[5], f32[5]) {
          %m2 = add(%m, %g)
          %n = tanh(%m2)
          return %m2, %m2, %n
        })",
     {How::Direct},
     {}},
    {"SymbolicCacheRow",
     R"(graph @g(%cache: f32[S, 4], %x: f32[S, 4]) -> (f32[S, 4] updates %cache, f32[S, 4]) {
          %c2 = add(%cache, %x)
          %y = relu(%c2)
          return %c2, %y
        })",
     {How::Direct},
     {{"S", 5}}},
    {"CondComputesTheUpdate",  // a branch's GEMM reads the input: computed aside
     R"(graph @g(%x: f32[3], %acc: f32[3, 3]) -> (f32[3, 3] updates %acc) {
          %s = sum(%x)
          %p = gt(%s, 0.0)
          %y = cond(%p, %acc) then(%a: f32[3, 3]) {
            %d = matmul(%a, %a)
            return %d
          } else(%a: f32[3, 3]) {
            %r = neg(%a)
            return %r
          }
          return %y
        })",
     {How::Copy},
     {}},
};

const Case kScatterCase = {"ScatterIntoTheCacheIsAStore", kDecodeStep, {How::Direct}, {{"L", 16}}, 5};

class InputUpdates : public ::testing::TestWithParam<Case> {};

TEST_P(InputUpdates, TextRoundTripsAndThePlanIsAsExpected) {
  const Case& c = GetParam();
  Graph g = Graph::parse(c.text);
  EXPECT_EQ(Graph::parse(g.text()).text(), g.text());
  EXPECT_NE(g.text().find(" updates %"), std::string::npos);
  const Executable exe = compile(g, {.device = Device::Cpu});
  const codegen::BufferAssignment a = codegen::assignBuffers(exe.optimized().entry());
  std::vector<How> plan;
  for (const auto& u : a.updates) plan.push_back(u.how);
  EXPECT_EQ(plan, c.plan) << codegen::describe(a);
}

/// `check(graph, executable, inputs)` for the case compiled on each backend
/// that runs here, on random inputs of `seed`.
template <typename Check>
void onEveryBackend(const Case& c, uint64_t seed, Check check) {
  const Graph g = Graph::parse(c.text);
  for (Device d : {Device::Reference, Device::Cpu}) {
    SCOPED_TRACE(std::string(codegen::deviceName(d)));
    const Executable exe = compile(g, {.device = d});
    std::vector<Tensor> inputs = randomInputs(exe.optimized().entry(), c.sizes, seed, c.integers);
    check(g.entry(), exe, inputs);
  }
}

TEST_P(InputUpdates, RunWritesTheCallersTensorOnEveryBackend) {
  onEveryBackend(GetParam(), 11, [](const ir::Graph& original, const Executable& exe, std::vector<Tensor>& inputs) {
    const ir::Graph& entry = exe.optimized().entry();
    const Step want = oracleStep(original, inputs);
    std::vector<Tensor> outputs = exe.run(inputs);
    ASSERT_EQ(outputs.size(), want.results.size());
    for (size_t k = 0; k < outputs.size(); ++k) {
      EXPECT_TRUE(allClose(outputs[k], want.results[k], kTol)) << "output " << k;
      if (const ir::Value* p = entry.updatedParam(k))
        EXPECT_EQ(outputs[k].data(), inputs[static_cast<size_t>(p->index())].data())
            << "output " << k << " is its input";
    }
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_TRUE(allClose(inputs[i], want.inputs[i], kTol)) << "input " << i;
  });
}

TEST_P(InputUpdates, ReplayUpdatesTheBoundInputsEachTime) {
  onEveryBackend(GetParam(), 23, [](const ir::Graph& original, const Executable& exe, std::vector<Tensor>& inputs) {
    const ir::Graph& entry = exe.optimized().entry();
    std::vector<Tensor> outputs = testing::poisonedOutputs(entry, inputs);  // updated results: their inputs
    exe.capture(inputs, outputs);
    std::vector<Tensor> state = copiesOf(inputs);
    for (int round = 0; round < 3; ++round) {
      const Step want = oracleStep(original, state);
      exe.replay();
      for (size_t k = 0; k < outputs.size(); ++k)
        EXPECT_TRUE(allClose(outputs[k], want.results[k], kTol)) << "round " << round << " output " << k;
      for (size_t i = 0; i < inputs.size(); ++i)
        EXPECT_TRUE(allClose(inputs[i], want.inputs[i], kTol)) << "round " << round << " input " << i;
      state = want.inputs;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Graphs, InputUpdates, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });
INSTANTIATE_TEST_SUITE_P(Scatter, InputUpdates, ::testing::Values(kScatterCase),
                         [](const auto& info) { return std::string(info.param.name); });

// A decode step's cache write: the scatter stays whole and stores the one
// new row into the caller's buffer — no copy of the cache, its address
// unchanged, every other row untouched bit for bit; an index out of range
// is an error that writes nothing.
TEST(InputUpdatesScatter, TheCacheWriteStoresOneRowInPlace) {
  const Graph g = Graph::parse(kDecodeStep);
  const Executable exe = compile(g, {.device = Device::Cpu});
  EXPECT_NE(exe.optimized().text().find("scatter_nd(%cache"), std::string::npos) << exe.optimized().text();
  EXPECT_EQ(exe.describe().find("copy"), std::string::npos) << exe.describe();
  const int64_t length = 300;
  std::vector<Tensor> inputs = randomInputs(g.entry(), {{"L", length}}, 3, 0);
  const std::byte* address = inputs[0].data();
  const size_t row = 64 * sizeof(float);
  for (int64_t pos : {0, 7, 299}) {
    inputs[1].setInt(0, pos);
    const Tensor before = copyOf(inputs[0]);
    const Step want = oracleStep(g.entry(), inputs);
    std::vector<Tensor> out = exe.run(inputs);
    EXPECT_EQ(inputs[0].data(), address);
    EXPECT_EQ(out[0].data(), address);
    EXPECT_TRUE(allClose(out[1], want.results[1], kTol)) << "pos " << pos;
    for (int64_t r = 0; r < length; ++r) {
      const std::byte* expected = r == pos ? inputs[2].data() : before.data() + static_cast<size_t>(r) * row;
      EXPECT_EQ(std::memcmp(inputs[0].data() + static_cast<size_t>(r) * row, expected, row), 0) << "row " << r;
    }
  }
  inputs[1].setInt(0, length);  // past the end
  const Tensor before = copyOf(inputs[0]);
  EXPECT_THROW(exe.run(inputs), Error);
  EXPECT_EQ(std::memcmp(inputs[0].data(), before.data(), before.nbytes()), 0) << "nothing written";
}

TEST(InputUpdatesSymbolic, ASecondSizeRebindsTheUpdatedInput) {
  const Graph g = Graph::parse(kCases[7].text);
  const Executable exe = compile(g, {.device = Device::Cpu});
  for (int64_t s : {5, 7, 5}) {
    std::vector<Tensor> inputs = randomInputs(g.entry(), {{"S", s}}, static_cast<uint64_t>(s));
    const Step want = oracleStep(g.entry(), inputs);
    std::vector<Tensor> outputs = exe.run(inputs);
    EXPECT_TRUE(allClose(inputs[0], want.inputs[0], kTol)) << "S=" << s;
    EXPECT_EQ(outputs[0].data(), inputs[0].data());
  }
}

// A run with the last run's sizes rebinds its steps to the new tensors
// (CpuExecutable's kept binding): the updates go to the new inputs, and the
// last run's are left alone.
TEST(InputUpdatesRebind, EachRunWritesItsOwnInputs) {
  for (const Case& c : {kCases[0], kCases[1], kCases[2], kScatterCase}) {
    SCOPED_TRACE(c.name);
    const Graph g = Graph::parse(c.text);
    const Executable exe = compile(g, {.device = Device::Cpu});
    std::vector<Tensor> first = randomInputs(g.entry(), c.sizes, 1, c.integers);
    exe.run(first);
    const std::vector<Tensor> firstAfter = copiesOf(first);
    std::vector<Tensor> second = randomInputs(g.entry(), c.sizes, 100, c.integers);
    const Step want = oracleStep(g.entry(), second);
    exe.run(second);
    for (size_t i = 0; i < second.size(); ++i) {
      EXPECT_TRUE(allClose(second[i], want.inputs[i], kTol)) << "input " << i;
      EXPECT_EQ(std::memcmp(first[i].data(), firstAfter[i].data(), first[i].nbytes()), 0) << "first run's input " << i;
    }
  }
}

TEST(InputUpdatesErrors, MisuseIsRejectedWithAReason) {
  const Graph sgd = Graph::parse(kCases[0].text);
  for (Device d : {Device::Reference, Device::Cpu}) {
    SCOPED_TRACE(std::string(codegen::deviceName(d)));
    const Executable exe = compile(sgd, {.device = d});
    std::vector<Tensor> inputs = randomInputs(sgd.entry(), {}, 3);
    // The same tensor for an updated input and another input.
    std::vector<Tensor> aliased = inputs;
    aliased[2] = aliased[0];
    try {
      exe.run(aliased);
      ADD_FAILURE() << "an updated input sharing memory ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is updated in place by result 0 and shares memory with input 2"),
                std::string::npos)
          << e.what();
    }
    // capture: an updated result bound to a tensor that is not its input.
    std::vector<Tensor> outputs = testing::poisonedOutputs(sgd.entry(), inputs);
    outputs[0] = copyOf(inputs[0]);
    try {
      exe.capture(inputs, outputs);
      ADD_FAILURE() << "capture took a separate tensor for an updated result";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("output 0 updates input 0 ('%w') in place: bind it to that input's tensor"),
                std::string::npos)
          << e.what();
    }
  }
  // A parameter updated in place cannot be frozen into a constant.
  EXPECT_THROW(sgd.withConstants({{"w", runtime::randomTensor(DType::F32, {4, 3}, 1)}}), Error);
}

TEST(InputUpdatesApi, WithInputUpdatesDeclaresAndChecks) {
  const Graph g = Graph::parse(R"(graph @g(%w: f32[3], %x: f32[3]) -> (f32[3], f32[]) {
    %w2 = add(%w, %x)
    %s = sum(%w2)
    return %w2, %s
  })");
  const Graph updated = g.withInputUpdates({{0, "w"}});
  EXPECT_NE(updated.text().find("f32[3] updates %w"), std::string::npos) << updated.text();
  EXPECT_TRUE(g.entry().inputUpdates.empty()) << "the original stays as it was";
  EXPECT_THROW(g.withInputUpdates({{1, "w"}}), CompileError) << "f32[] cannot update f32[3]";
  EXPECT_THROW(g.withInputUpdates({{0, "nope"}}), Error);
  EXPECT_THROW(g.withInputUpdates({{2, "w"}}), Error);
  std::vector<Tensor> inputs = randomInputs(g.entry(), {}, 5);
  const Tensor before = copyOf(inputs[0]);
  compile(updated, {.device = Device::Cpu}).run(inputs);
  Tensor want = copyOf(before);
  for (int64_t i = 0; i < 3; ++i) want.setDouble(i, before.getDouble(i) + inputs[1].getDouble(i));
  EXPECT_TRUE(allClose(inputs[0], want, kTol));
}

}  // namespace
}  // namespace graphc
