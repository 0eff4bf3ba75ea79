// The passes of this stage and the pass manager's contract: changed flags,
// verification after each changed pass, dumps.
#include <atomic>

#include <gtest/gtest.h>

#include "TestUtil.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "passes/RegionSweep.h"
#include "runtime/Executable.h"

namespace graphc {
namespace {

std::string runPasses(const std::string& text, const std::string& pipeline) {
  auto m = testing::parseOk(text);
  if (!m) return "";
  ir::DiagnosticEngine diags;
  passes::PassManager pm;
  EXPECT_TRUE(passes::addPipeline(pm, pipeline, diags));
  EXPECT_TRUE(pm.run(*m, diags));
  return ir::print(*m);
}

TEST(CSE, MergesIdenticalNodesAndDCERemovesTheRest) {
  std::string out = runPasses(R"(
graph @g(%x: f32[4]) -> (f32[4]) {
  %a = exp(%x)
  %b = exp(%x)
  %c = add(%a, %b)
  %d = sum(%x) {dims = [0]}
  %e = sum(%x) {dims = [0], keepdim = true}
  %u = relu(%c)
  return %c
})",
                              "cse,dce");
  EXPECT_EQ(out,
            "graph @g(%x: f32[4]) -> (f32[4]) {\n"
            "  %a = exp(%x) : f32[4]\n"
            "  %c = add(%a, %a) : f32[4]\n"
            "  return %c\n"
            "}\n");
}

TEST(CSE, RespectsAttributesAndWorksInsideRegions) {
  std::string out = runPasses(R"(
graph @g(%p: bool[], %x: f32[4]) -> (f32[4]) {
  %y = cond(%p, %x) then(%a: f32[4]) {
    %s = mul(%a, 2.0)
    %t = mul(%a, 2.0)
    %r = add(%s, %t)
    return %r
  } else(%a: f32[4]) {
    %c1 = clamp(%a) {min = 0.0}
    %c2 = clamp(%a) {max = 0.0}
    %r = add(%c1, %c2)
    return %r
  }
  return %y
})",
                              "cse,dce");
  // Two equal literals and two equal muls merge; the clamps differ.
  EXPECT_NE(out.find("%r = add(%s, %s)"), std::string::npos) << out;
  EXPECT_NE(out.find("%r = add(%c1, %c2)"), std::string::npos) << out;
  EXPECT_EQ(out.find("%t ="), std::string::npos) << out;
}

TEST(InferTypes, RepairsStaleTypes) {
  auto m = testing::parseOk("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%x)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  m->entry()->body.nodes()[0]->result()->type.shape[0] = ir::Dim::of(7);  // as a careless pass might
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(ir::verify(*m, diags));
  passes::PassManager pm;
  pm.add(passes::createPass("infer-types"));
  EXPECT_TRUE(pm.run(*m, diags));
  ir::DiagnosticEngine clean;
  EXPECT_TRUE(ir::verify(*m, clean));
}

/// A pass that breaks the IR on purpose: the manager must name it.
class BreakTypesPass final : public passes::Pass {
 public:
  std::string_view name() const override { return "break-types"; }
  std::string_view description() const override { return "test only"; }
  passes::PassResult run(ir::Graph& g, ir::DiagnosticEngine&) override {
    g.body.nodes()[0]->result()->type.dtype = ir::DType::F64;
    return {true, false};
  }
};

TEST(PassManager, NamesThePassThatBrokeAnInvariant) {
  auto m = testing::parseOk("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%x)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  ir::DiagnosticEngine diags;
  passes::PassManager pm;
  pm.add(std::make_unique<BreakTypesPass>());
  pm.add(passes::createPass("dce"));
  bool dceRan = false;
  pm.afterPass = [&](const passes::Pass& p, const ir::Module&, bool) { dceRan |= p.name() == "dce"; };
  EXPECT_FALSE(pm.run(*m, diags));
  EXPECT_FALSE(dceRan);
  ASSERT_FALSE(diags.all().empty());
  EXPECT_EQ(diags.all().back().message, "the IR after pass 'break-types' is invalid: the pass broke an invariant");
}

/// A pass that changes the IR but says it did not.
class DishonestPass final : public passes::Pass {
 public:
  std::string_view name() const override { return "dishonest"; }
  std::string_view description() const override { return "test only"; }
  passes::PassResult run(ir::Graph& g, ir::DiagnosticEngine&) override {
    g.body.nodes()[0]->result()->name = "renamed";
    return {false, false};
  }
};

TEST(PassManager, CatchesAPassThatHidesAChange) {
  auto m = testing::parseOk("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%x)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  ir::DiagnosticEngine diags;
  passes::PassManagerOptions options;
  options.checkChangedFlag = true;
  passes::PassManager pm(options);
  pm.add(std::make_unique<DishonestPass>());
  EXPECT_FALSE(pm.run(*m, diags));
  EXPECT_EQ(diags.all().back().message, "pass 'dishonest' reported no change but changed the IR");
}

/// What the pass manager dumps running the passes named in `before`, then
/// break-types, over `text`; the run must fail.
std::string dumpsOfABrokenPipeline(const std::string& text, const std::vector<std::string>& before) {
  auto m = testing::parseOk(text);
  if (!m) return "";
  std::string dumps;
  passes::PassManagerOptions options;
  options.dumpSink = [&](const std::string& dump) { dumps += dump; };
  passes::PassManager pm(options);
  for (const std::string& name : before) pm.add(passes::createPass(name));
  pm.add(std::make_unique<BreakTypesPass>());
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(pm.run(*m, diags));
  return dumps;
}

TEST(PassManager, BrokenInvariantPrintsTheIRBeforeThePass) {
  EXPECT_EQ(dumpsOfABrokenPipeline("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%x)\n  return %y\n}\n", {}),
            "// ----- IR before break-types (which broke an invariant) -----\n"
            "graph @g(%x: f32[4]) -> (f32[4]) {\n"
            "  %y = relu(%x) : f32[4]\n"
            "  return %y\n"
            "}\n");
}

TEST(PassManager, TheIRBeforeABrokenPassIsTheEarlierPassesOutput) {
  // The dump is rebuilt by replaying the passes before the broken one on the
  // input: here dce's output, without the dead neg.
  EXPECT_EQ(dumpsOfABrokenPipeline(
                "graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%x)\n  %dead = neg(%x)\n  return %y\n}\n", {"dce"}),
            "// ----- IR before break-types (which broke an invariant) -----\n"
            "graph @g(%x: f32[4]) -> (f32[4]) {\n"
            "  %y = relu(%x) : f32[4]\n"
            "  return %y\n"
            "}\n");
}

TEST(PassManager, StopsBetweenPassesWhenItsCancelFlagIsSet) {
  auto m = testing::parseOk("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%x)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  std::atomic<bool> cancel{false};
  passes::PassManagerOptions options;
  options.cancel = &cancel;
  passes::PassManager pm(options);
  pm.add(passes::createPass("dce"));
  pm.add(passes::createPass("cse"));
  std::vector<std::string> ran;
  pm.afterPass = [&](const passes::Pass& p, const ir::Module&, bool) {
    ran.emplace_back(p.name());
    cancel = true;  // another thread's cancel, between the two passes
  };
  ir::DiagnosticEngine diags;
  try {
    pm.run(*m, diags);
    ADD_FAILURE() << "the pipeline was not cancelled";
  } catch (const runtime::Cancelled& e) {
    EXPECT_STREQ(e.what(), "the compile was cancelled");
  }
  EXPECT_EQ(ran, std::vector<std::string>{"dce"});
}

TEST(RegionSweep, ReplacementsReachLaterNodesAndTheReturnsThroughChains) {
  auto m = testing::parseOk(
      "graph @g(%x: f32[4]) -> (f32[4], f32[4]) {\n  %a = relu(%x)\n  %b = neg(%a)\n  %c = exp(%b)\n"
      "  %d = add(%c, %a)\n  return %d, %b\n}\n");
  ASSERT_TRUE(m);
  ir::Region& r = m->entry()->body;
  ir::Value* x = r.param(0);
  {
    passes::RegionSweep sweep(r);
    ir::Node* a = sweep.next();
    EXPECT_EQ(sweep.uses(a->result()), 2);
    sweep.replace(a->result(), x);  // a → x
    sweep.dropCurrent();
    EXPECT_EQ(sweep.uses(x), 2);  // a's two uses moved to x; a's own use of x dropped with it
    ir::Node* b = sweep.next();
    EXPECT_EQ(b->operands[0], x);
    EXPECT_EQ(sweep.position(), 0u);
    ir::Value* bResult = b->result();
    ir::Node* c = sweep.next();
    sweep.replace(bResult, x);  // b → x: c already read b; the return reads x
    // d and the returns are not reached by next(): the end of the sweep
    // applies the replacements to them.
    EXPECT_EQ(c->operands[0], bResult);
  }
  EXPECT_EQ(ir::print(*m),
            "graph @g(%x: f32[4]) -> (f32[4], f32[4]) {\n"
            "  %b = neg(%x) : f32[4]\n"
            "  %c = exp(%b) : f32[4]\n"
            "  %d = add(%c, %x) : f32[4]\n"
            "  return %d, %x\n"
            "}\n");
}

TEST(PassManager, PrintAfterChangeSkipsPassesThatChangedNothing) {
  auto m = testing::parseOk("graph @g(%x: f32[4]) -> (f32[4]) {\n  %y = relu(%x)\n  %z = neg(%x)\n  return %y\n}\n");
  ASSERT_TRUE(m);
  std::string dumps;
  passes::PassManagerOptions options;
  options.printAfterChange = true;
  options.dumpSink = [&](const std::string& text) { dumps += text; };
  passes::PassManager pm(options);
  ir::DiagnosticEngine diags;
  ASSERT_TRUE(passes::addPipeline(pm, "cse,dce,dce", diags));
  ASSERT_TRUE(pm.run(*m, diags));
  EXPECT_EQ(dumps,
            "// ----- IR after dce -----\n"
            "graph @g(%x: f32[4]) -> (f32[4]) {\n"
            "  %y = relu(%x) : f32[4]\n"
            "  return %y\n"
            "}\n");
}

TEST(PassManager, UnknownPassIsReported) {
  passes::PassManager pm;
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(passes::addPipeline(pm, "cse,fuse-everything", diags));
  EXPECT_EQ(diags.all().at(0).message, "unknown pass 'fuse-everything' (graphc --list-passes lists them)");
}

}  // namespace
}  // namespace graphc
