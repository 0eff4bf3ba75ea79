// The embedding API (frontend/graphc.h): the tracer builds the graphs the
// parser would, with errors located in the C++ source; compile() runs the
// pipeline and the backends; compiled(fn) guards, recompiles once per new
// static size and never for a dynamic dim, and falls back past its limit;
// debug dumps hold every pass's IR and the kernels' source, and re-parse.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "frontend/api/DebugDump.h"
#include "frontend/api/graphc.h"
#include "frontend/parser/Parser.h"
#include "ir/Dot.h"
#include "runtime/Random.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;
using testing::allClose;
using testing::defaultTolerance;

Tensor rand(std::vector<int64_t> shape, uint64_t seed, DType dtype = DType::F32) {
  return runtime::randomTensor(dtype, shape, seed);
}

void expectClose(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_TRUE(allClose(got[k], want[k], defaultTolerance(want[k].dtype()))) << "output " << k;
}

TracedTensor mlp(TracedTensor x, TracedTensor w1, TracedTensor b1, TracedTensor w2, TracedTensor b2) {
  return softmax(linear(relu(linear(x, w1, b1)), w2, b2), -1);
}

const std::vector<TensorSpec> kMlpSpecs{{DType::F32, {"B", 16}, "x"},
                                        {DType::F32, {32, 16}, "w1"},
                                        {DType::F32, {32}, "b1"},
                                        {DType::F32, {4, 32}, "w2"},
                                        {DType::F32, {4}, "b2"}};

std::vector<Tensor> mlpInputs(int64_t batch) {
  return {rand({batch, 16}, 1), rand({32, 16}, 2), rand({32}, 3), rand({4, 32}, 4), rand({4}, 5)};
}

// --- tracing -----------------------------------------------------------------

TEST(TracerTest, TracesTheGraphTheParserWouldRead) {
  Graph g = trace(mlp, kMlpSpecs, "mlp");
  EXPECT_EQ(
      g.text(),
      "graph @mlp(%x: f32[B, 16], %w1: f32[32, 16], %b1: f32[32], %w2: f32[4, 32], %b2: f32[4]) -> (f32[B, 4]) {\n"
      "  %0 = linear(%x, %w1, %b1) : f32[B, 32]\n"
      "  %1 = relu(%0) : f32[B, 32]\n"
      "  %2 = linear(%1, %w2, %b2) : f32[B, 4]\n"
      "  %3 = softmax(%2) {dim = -1} : f32[B, 4]\n"
      "  return %3\n"
      "}\n");
  EXPECT_EQ(Graph::parse(g.text()).text(), g.text());
}

TEST(TracerTest, TakesAListOrSpreadArgumentsAndReturnsTuples) {
  Graph listed = trace([](const TracedList& a) { return TracedList{a[0] + a[1], a[0] * 2.0}; },
                       {{DType::F32, {4}, "a"}, {DType::F32, {4}, "b"}});
  EXPECT_EQ(listed.entry().resultTypes.size(), 2u);
  Graph pair = trace([](TracedTensor a) { return eigh(a); }, {{DType::F64, {3, 3}, "a"}});
  EXPECT_EQ(ir::toString(pair.entry().resultTypes), "f64[3], f64[3, 3]");
}

TEST(TracerTest, EveryOpTracesAndCompilesToWhatTheReferenceComputes) {
  auto fn = [](TracedTensor x, TracedTensor y, TracedTensor m) {
    TracedTensor p = abs(x) + 1.0;
    TracedList outs{neg(x),
                    exp(x * 0.1),
                    log(p),
                    sqrt(p),
                    rsqrt(p),
                    sin(x),
                    cos(x),
                    tanh(x),
                    sigmoid(x),
                    relu(x),
                    gelu(x),
                    gelu(x, "tanh"),
                    silu(x),
                    erf(x),
                    reciprocal(p),
                    x - y,
                    x / p,
                    pow(p, y),
                    maximum(x, y),
                    minimum(x, y),
                    cast(x > y, DType::F32),
                    cast((eq(x, x) & ne(x, y)) | ~(x <= y), DType::F32),
                    where(x >= y, x, y),
                    clamp(x, -0.5, 0.5),
                    sum(x, {1}),
                    mean(x, {0}, true),
                    amax(x),
                    amin(x, {1}),
                    softmax(x, 1),
                    log_softmax(x, 0),
                    layer_norm(x, y, y),
                    matmul(x, transpose(y, 0, 1)),
                    linear(x, y),
                    reshape(x, {5, -1}),
                    permute(x, {1, 0}),
                    expand(unsqueeze(sum(x), 0), {3}),
                    slice(x, 1, 1, 4, 2),
                    concat({x, y}, 0),
                    squeeze(unsqueeze(x, 0), 0),
                    constant(testing::tensorOf(DType::F32, {2}, {1.5, -2.0})),
                    full(0.25, DType::F32, {2, 2})};
    auto [vals, vecs] = eigh(m);
    outs.push_back(vals);
    outs.push_back(abs(vecs));  // eigenvectors are defined up to sign
    return outs;
  };
  Tensor sym = rand({4, 4}, 9, DType::F64);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < i; ++j) sym.setDouble(i * 4 + j, sym.getDouble(j * 4 + i));
  Graph g = trace(fn, {{DType::F32, {3, 5}, "x"}, {DType::F32, {3, 5}, "y"}, {DType::F64, {4, 4}, "m"}});
  std::vector<Tensor> inputs{rand({3, 5}, 7), rand({3, 5}, 8), sym};
  for (std::string_view op : {"neg", "rsqrt", "log_softmax", "layer_norm", "expand", "concat", "eigh", "logical_or"})
    EXPECT_NE(g.text().find(std::string(op) + "("), std::string::npos) << op;
  expectClose(compile(g, {.device = Device::Cpu}).run(inputs), compile(g, {.device = Device::Reference}).run(inputs));
}

TEST(TracerTest, TheModelOpsTraceAndCompileToWhatTheReferenceComputes) {
  auto fn = [](TracedTensor img, TracedTensor w, TracedTensor c, TracedTensor rows, TracedTensor upd) {
    TracedTensor y = conv(img, w, c, {.padding = {1, 1, 1, 1}});
    TracedTensor n = batch_norm(y, c, abs(c) + 0.5, c, c);
    TracedTensor t = conv_transpose(relu(n), w, std::nullopt, {.stride = {2, 2}});
    TracedTensor flat = reshape(img, {2, -1});
    TracedList outs{max_pool(n, {2, 2}, {.stride = {2, 2}}),
                    avg_pool(n, {3, 3}, {.padding = {1, 1, 1, 1}, .countIncludePad = true}),
                    t,
                    group_norm(n, c, c, 2),
                    floor(img * 3.0),
                    ceil(img * 3.0),
                    round(img * 3.0),
                    prod(flat, {1}),
                    cast(argmax(flat, 1), DType::F32),
                    cast(argmin(flat, 0, true), DType::F32),
                    cumsum(flat, 1, true, true),
                    gather_nd(img, rows),
                    scatter_nd(img, rows, upd, "add"),
                    resize(img, {2, 3, 8, 10}, "linear", "half_pixel"),
                    iota(DType::F32, {2, 5}, 1, 0.5, 0.25)};
    return outs;
  };
  Graph g = trace(fn, {{DType::F32, {2, 3, 4, 5}, "img"},
                       {DType::F32, {4, 3, 3, 3}, "w"},
                       {DType::F32, {4}, "c"},
                       {DType::I64, {2, 1}, "rows"},
                       {DType::F32, {2, 3, 4, 5}, "upd"}});
  Tensor rows = testing::tensorOf(DType::I64, {2, 1}, {1, -1});
  std::vector<Tensor> inputs{rand({2, 3, 4, 5}, 1), rand({4, 3, 3, 3}, 2), rand({4}, 3), rows, rand({2, 3, 4, 5}, 4)};
  for (std::string_view op : {"conv(", "batch_norm(", "conv_transpose(", "group_norm(", "scatter_nd(", "iota("})
    EXPECT_NE(g.text().find(op), std::string::npos) << op;
  expectClose(compile(g, {.device = Device::Cpu}).run(inputs), compile(g, {.device = Device::Reference}).run(inputs));
}

TEST(TracerTest, CondLiftsOuterValuesThroughNestedBranches) {
  // `w` is used two branches deep without being passed: both conds get it
  // as an extra operand, and the regions stay isolated (the graph verifies).
  auto fn = [](TracedTensor x, TracedTensor w, TracedTensor p, TracedTensor q) {
    return cond(
               p,
               [&](TracedTensor a) {
                 return cond(
                            q, [&](TracedTensor b) { return b * w; }, [&](TracedTensor b) { return b + w; }, {a})
                     .front();
               },
               [&](TracedTensor a) { return relu(a); }, {x})
        .front();
  };
  Graph g = trace(fn, {{DType::F32, {8}, "x"}, {DType::F32, {8}, "w"}, {DType::Bool, {}, "p"}, {DType::Bool, {}, "q"}});
  EXPECT_NE(g.text().find("cond(%p, %x, %q, %w)"), std::string::npos) << g.text();
  EXPECT_EQ(Graph::parse(g.text()).text(), g.text());
  Executable cpu = compile(g), ref = compile(g, {.device = Device::Reference});
  for (bool p : {true, false})
    for (bool q : {true, false}) {
      Tensor tp(DType::Bool, {}), tq(DType::Bool, {});
      tp.setInt(0, p);
      tq.setInt(0, q);
      std::vector<Tensor> in{rand({8}, 1), rand({8}, 2), tp, tq};
      expectClose(cpu.run(in), ref.run(in));
    }
}

TEST(TracerTest, ATypeErrorIsLocatedAtTheCallingLine) {
  int line = 0;
  try {
    trace(
        [&](TracedTensor a, TracedTensor b) {
          line = __LINE__ + 1;
          return matmul(a, b);
        },
        {{DType::F32, {2, 3}, "a"}, {DType::F32, {4, 5}, "b"}});
    FAIL() << "no error";
  } catch (const CompileError& e) {
    ASSERT_EQ(e.diagnostics.size(), 1u);
    const std::string where = fmt::format("EmbeddingTest.cpp:{}:", line);
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("error: 'matmul'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("return matmul(a, b);"), std::string::npos) << "the source line is shown";
  }
}

TEST(TracerTest, MisusedTracedTensorsAreClearErrors) {
  TracedTensor kept;
  trace([&](TracedTensor a) { return kept = relu(a); }, {{DType::F32, {2}, "a"}});
  EXPECT_THROW(relu(kept), Error);  // outside any trace
  EXPECT_THROW((void)kept.type(), Error);
  try {
    trace([&](TracedTensor a) { return a + kept; }, {{DType::F32, {2}, "a"}});
    FAIL() << "a value of another trace was accepted";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to another trace()"), std::string::npos) << e.what();
  }
  try {
    trace(
        [](TracedTensor a, TracedTensor p) {
          TracedTensor inner;
          cond(p, [&](TracedTensor b) { return inner = exp(b); }, [](TracedTensor b) { return b; }, {a});
          return inner;
        },
        {{DType::F32, {2}, "a"}, {DType::Bool, {}, "p"}});
    FAIL() << "a branch value escaped its branch";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("inside a cond branch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      trace([](TracedTensor a) { return trace([](TracedTensor b) { return b; }, {}), a; }, {{DType::F32, {2}, "a"}}),
      Error);
  EXPECT_THROW(trace([](TracedTensor a) { return a; }, {{DType::F32, {2}, "a"}, {DType::F32, {2}, "b"}}), Error)
      << "arity mismatch";
  EXPECT_THROW(trace([](TracedTensor a, TracedTensor p) { return cond(p, BranchFn{}, BranchFn{}, {a}); },
                     {{DType::F32, {2}, "a"}, {DType::Bool, {}, "p"}}),
               CompileError)
      << "a cond without branches";
}

// --- compile() ---------------------------------------------------------------

TEST(CompileApiTest, ErrorsCarryTheCliLocatedMessages) {
  try {
    Graph::parse("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%q)\n  return %y\n}\n", "bad.graph");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.graph:2:13: error: use of undefined value '%q'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Graph::load("/nonexistent/x.graph"), CompileError);
  EXPECT_THROW(compile(trace(mlp, kMlpSpecs), {.passes = "no-such-pass"}), CompileError);
  Executable exe = compile(trace(mlp, kMlpSpecs));
  try {
    std::vector<Tensor> in = mlpInputs(2);
    in[0] = rand({2, 17}, 1);
    exe.run(in);
    FAIL() << "bad inputs accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("%x"), std::string::npos) << e.what();
  }
}

TEST(CompileApiTest, RunsCapturesAndReplaysOnEveryDevice) {
  Graph g = Graph::load(GRAPHC_SOURCE_DIR "/examples/mlp.graph");
  std::vector<Tensor> inputs = mlpInputs(6);
  std::vector<Tensor> want = compile(g, {.device = Device::Reference}).run(inputs);
  for (Device d : {Device::Reference, Device::Cpu}) {
    Executable exe = compile(g, {.device = d});
    EXPECT_EQ(exe.device(), d);
    EXPECT_THROW(exe.replay(), Error) << "replay before capture";
    expectClose(exe.run(inputs), want);
    std::vector<Tensor> outputs = testing::poisonedOutputs(g.entry(), inputs);
    exe.capture(inputs, outputs);
    exe.replay();
    expectClose(outputs, want);
    // Replay reads what the bound inputs hold now.
    Tensor fresh = rand({6, 16}, 77);
    std::memcpy(inputs[0].data(), fresh.data(), fresh.nbytes());
    exe.replay();
    expectClose(outputs, compile(g, {.device = Device::Reference}).run(inputs));
    inputs = mlpInputs(6);
  }
  EXPECT_NE(compile(g).optimized().text().find("fused("), std::string::npos);
}

TEST(CompileApiTest, ACompileStopsWhenItsCancelFlagIsSet) {
  std::atomic<bool> cancel{true};
  for (Device d : {Device::Reference, Device::Cpu}) {
    try {
      compile(trace(mlp, kMlpSpecs), {.device = d, .cancel = &cancel});
      ADD_FAILURE() << "not cancelled";
    } catch (const Cancelled& e) {
      EXPECT_STREQ(e.what(), "the compile was cancelled");
    }
  }
  cancel = false;
  EXPECT_NO_THROW(compile(trace(mlp, kMlpSpecs), {.cancel = &cancel}));
}

TEST(CompileApiTest, CudaWithoutADeviceIsOneClearError) {
  if (std::getenv("GRAPHC_TEST_HAS_GPU")) GTEST_SKIP() << "a GPU is present";
  try {
    compile(trace(mlp, kMlpSpecs), {.device = Device::Cuda});
    GTEST_SKIP() << "a CUDA device is usable here";
  } catch (const Error& e) {
    if (codegen::hasBackend(Device::Cuda))
      EXPECT_EQ(std::string(e.what()).rfind("no CUDA device: ", 0), 0u) << e.what();
    else
      EXPECT_NE(std::string(e.what()).find("without the cuda backend"), std::string::npos) << e.what();
  }
}

// --- graph edits ---------------------------------------------------------------

TEST(GraphEditsTest, WithConstantsBindsWeightsByCopyAndRunsOnTheRest) {
  const Graph g = trace(mlp, kMlpSpecs, "mlp");
  std::vector<Tensor> in = mlpInputs(3);
  const std::vector<Tensor> want = compile(g, {.device = Device::Reference}).run(in);
  Tensor w1 = rand({32, 16}, 2);
  const Graph frozen = g.withConstants({{"w1", w1}, {"b1", in[2]}, {"w2", in[3]}, {"b2", in[4]}});
  ASSERT_EQ(frozen.entry().body.params().size(), 1u);
  EXPECT_EQ(g.entry().body.params().size(), 5u);  // the original is untouched
  std::memset(w1.data(), 0, w1.nbytes());         // copied: the caller's tensor stays theirs
  for (Device d : {Device::Reference, Device::Cpu}) expectClose(compile(frozen, {.device = d}).run({in[0]}), want);
}

TEST(GraphEditsTest, WithConstantsRejectsUnknownNamesAndMisfits) {
  const Graph g = trace(mlp, kMlpSpecs, "mlp");
  EXPECT_THROW(g.withConstants({{"w9", rand({32, 16}, 1)}}), Error);
  EXPECT_THROW(g.withConstants({{"w1", rand({16, 32}, 1)}}), Error);              // wrong shape
  EXPECT_THROW(g.withConstants({{"w1", rand({32, 16}, 1, DType::F64)}}), Error);  // wrong dtype
  EXPECT_THROW(g.withConstants({{"x", rand({2, 16}, 1)}}), Error);                // a symbolic dim
}

TEST(GraphEditsTest, WithDynamicDimsUnpinsAStaticBatch) {
  const Graph g = Graph::parse(
      "graph @f(%x: f32[2, 4]) -> (f32[2, 4]) {\n  %y = relu(%x)\n  %z = softmax(%y) {dim = -1}\n  return %z\n}\n");
  const Graph dynamic = g.withDynamicDims({{"x", {{0, "N"}}}});
  EXPECT_EQ(ir::toString(dynamic.entry().body.param(0)->type), "f32[N, 4]");
  EXPECT_EQ(ir::toString(dynamic.entry().resultTypes), "f32[N, 4]");
  const Executable exe = compile(dynamic);
  for (int64_t n : {1, 5}) EXPECT_EQ(exe.run({rand({n, 4}, 1)})[0].shape(), (std::vector<int64_t>{n, 4}));
  EXPECT_THROW(g.withDynamicDims({{"x", {{2, "N"}}}}), Error);
  EXPECT_THROW(g.withDynamicDims({{"q", {{0, "N"}}}}), Error);
  EXPECT_THROW(g.withDynamicDims({{"x", {{0, "2N"}}}}), Error);
  // A rule that needs the static size fails located.
  const Graph pinned = Graph::parse(
      "graph @g(%x: f32[2, 4]) -> (f32[8]) {\n  %y = reshape(%x) {shape = [8]}\n  return %y\n}\n", "pinned.graph");
  try {
    (void)pinned.withDynamicDims({{"x", {{0, "N"}}}});
    ADD_FAILURE() << "a reshape to a static size accepted a symbolic batch";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("pinned.graph:2:"), std::string::npos) << e.what();
  }
}

TEST(GraphEditsTest, WithStaticDimsPinsASymbolicSize) {
  const Graph g = Graph::parse(
      "graph @f(%x: f32[B, 4], %y: f32[B, S]) -> (f32[B, 4], f32[B, S]) {\n  %a = relu(%x)\n"
      "  %b = softmax(%y) {dim = -1}\n  return %a, %b\n}\n");
  const Graph pinned = g.withStaticDims({{"B", 3}});
  EXPECT_EQ(ir::toString(pinned.entry().body.param(0)->type), "f32[3, 4]");
  EXPECT_EQ(ir::toString(pinned.entry().resultTypes), "f32[3, 4], f32[3, S]");
  EXPECT_EQ(ir::toString(g.entry().body.param(0)->type), "f32[B, 4]");  // the original is untouched
  const Executable exe = compile(pinned);
  EXPECT_EQ(exe.run({rand({3, 4}, 1), rand({3, 7}, 2)})[1].shape(), (std::vector<int64_t>{3, 7}));
  EXPECT_THROW(exe.run({rand({2, 4}, 1), rand({2, 7}, 2)}), Error);  // B is 3 now
  EXPECT_THROW(g.withStaticDims({{"Q", 3}}), Error);
  EXPECT_THROW(g.withStaticDims({{"B", -1}}), Error);
}

// --- compiled(fn) ------------------------------------------------------------

TEST(CompiledTest, RecompilesOnceForANewStaticSizeWithTheReasonLogged) {
  CompiledFunction f = compiled(mlp, {.name = "mlp"});
  std::vector<std::string> log;
  f.setLogSink([&](const std::string& line) { log.push_back(line); });
  Executable ref = compile(trace(mlp, kMlpSpecs), {.device = Device::Reference});
  for (int64_t batch : {32, 32, 64, 64, 32}) {
    std::vector<Tensor> in = mlpInputs(batch);
    expectClose(f(in), ref.run(in));
  }
  CompileStats s = f.stats();
  EXPECT_EQ(s.compiles, 2);
  EXPECT_EQ(s.cacheHits, 3);
  ASSERT_EQ(log, std::vector<std::string>{"recompiling mlp: input 0 dim 0: 32 != 64"});
  EXPECT_EQ(f.checkGuards(mlpInputs(64)), "");
  EXPECT_EQ(f.checkGuards(mlpInputs(5)), "input 0 dim 0: 64 != 5");
}

TEST(CompiledTest, ADynamicDimDoesNotRecompile) {
  CompiledFunction f = compiled(mlp, {.dynamicDims = {{.input = 0, .dim = 0}}, .name = "mlp"});
  std::vector<std::string> log;
  f.setLogSink([&](const std::string& line) { log.push_back(line); });
  Executable ref = compile(trace(mlp, kMlpSpecs), {.device = Device::Reference});
  for (int64_t batch : {32, 64, 1, 300}) {
    std::vector<Tensor> in = mlpInputs(batch);
    expectClose(f(in), ref.run(in));
  }
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_TRUE(log.empty());
  // Other guards still hold: a new dtype or rank recompiles.
  std::vector<Tensor> wrongRank = mlpInputs(2);
  wrongRank[1] = rand({32, 16, 1}, 2);
  EXPECT_EQ(f.checkGuards(wrongRank), "input 1 rank: 2 != 3");
  std::vector<Tensor> wrongDtype = mlpInputs(2);
  wrongDtype[2] = rand({32}, 3, DType::F64);
  EXPECT_EQ(f.checkGuards(wrongDtype), "input 2 dtype: f32 != f64");
  EXPECT_EQ(f.checkGuards({}), "5 inputs != 0");
  EXPECT_THROW(compiled(mlp, {.dynamicDims = {{.input = 0, .dim = 2}}})(mlpInputs(2)), Error);
}

TEST(CompiledTest, PastTheRecompileLimitRunsOnTheReferenceWithOneWarning) {
  CompiledFunction f = compiled([](TracedTensor x) { return relu(x) * 2.0; }, {.name = "g", .recompileLimit = 2});
  std::vector<std::string> log;
  f.setLogSink([&](const std::string& line) { log.push_back(line); });
  for (int64_t n : {4, 5, 6, 7, 4}) {
    Tensor x = rand({n}, static_cast<uint64_t>(n));
    std::vector<Tensor> y = f({x});
    for (int64_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(y[0].getDouble(i), std::max(0.0, x.getDouble(i)) * 2.0);
  }
  CompileStats s = f.stats();
  EXPECT_EQ(s.compiles, 2);
  EXPECT_EQ(s.fallbackCalls, 2);
  EXPECT_EQ(s.cacheHits, 1);  // the last call, n = 4, fits the first entry
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "recompiling g: input 0 dim 0: 4 != 5");
  EXPECT_NE(log[1].find("warning: g hit the recompile limit (2)"), std::string::npos) << log[1];
}

TEST(CompiledTest, GraphcLogsRecompilesPrintsToStderr) {
  ::setenv("GRAPHC_LOGS", "+recompiles", 1);
  CompiledFunction f = compiled([](TracedTensor x) { return exp(x); }, {.name = "fn"});
  ::unsetenv("GRAPHC_LOGS");
  ::testing::internal::CaptureStderr();
  f({rand({32}, 1)});
  f({rand({64}, 1)});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "recompiling fn: input 0 dim 0: 32 != 64\n");
}

// --- dumps and pictures -----------------------------------------------------

std::vector<fs::path> filesUnder(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DebugDumpTest, TheMlpDumpHoldsEveryPassAndKernelAndReparses) {
  const fs::path root = fs::path(::testing::TempDir()) / "graphc-dump-test";
  fs::remove_all(root);
  ::setenv("GRAPHC_DEBUG_DIR", root.c_str(), 1);
  Executable exe = compile(Graph::load(GRAPHC_SOURCE_DIR "/examples/mlp.graph"));
  ::unsetenv("GRAPHC_DEBUG_DIR");
  ASSERT_EQ(exe.dumpDir(), (root / "000_mlp").string());
  std::vector<fs::path> files = filesUnder(exe.dumpDir());
  auto has = [&](const std::string& f) { return std::find(files.begin(), files.end(), fs::path(f)) != files.end(); };
  EXPECT_TRUE(has("00_captured.graph"));
  EXPECT_TRUE(has("11_after_fuse.graph"));
  EXPECT_TRUE(has("buffers.txt"));
  for (const char* k : {"k0_linear_relu", "k1_linear", "k2_amax_sub_exp_sum_div"}) {
    EXPECT_TRUE(has(fmt::format("kernels/{}.kernel", k))) << k;
    EXPECT_TRUE(has(fmt::format("kernels/{}.ll", k))) << k;
  }
  EXPECT_TRUE(has("timing.txt"));
  int graphs = 0;
  for (const fs::path& f : files) {
    if (f.extension() != ".graph") continue;
    ++graphs;
    ir::DiagnosticEngine diags;
    auto m = frontend::parseFile((fs::path(exe.dumpDir()) / f).string(), diags);
    ASSERT_TRUE(m) << f << " does not re-parse";
  }
  EXPECT_EQ(graphs, 13);  // captured + the 11 passes of the default pipeline + the cpu's fuse-attention
  std::ifstream ll(fs::path(exe.dumpDir()) / "kernels/k0_linear_relu.ll");
  std::string first;
  std::getline(ll, first);
  EXPECT_NE(first.find("ModuleID"), std::string::npos) << first;

  // A second compile gets its own folder.
  EXPECT_EQ(compile(Graph::load(GRAPHC_SOURCE_DIR "/examples/mlp.graph"), {.dumpDir = root.string()}).dumpDir(),
            (root / "001_mlp").string());
}

TEST(DotTest, NamesFromTheInputAreEscaped) {
  Graph g = trace([](TracedTensor a) { return relu(a); }, {{DType::F32, {2}, "a\"b\\c"}}, "say\"hi");
  std::string dot = ir::toDot(g.entry());
  EXPECT_NE(dot.find("digraph \"say\\\"hi\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"%a\\\"b\\\\c\\nf32[2]\""), std::string::npos) << dot;
}

}  // namespace
}  // namespace graphc
