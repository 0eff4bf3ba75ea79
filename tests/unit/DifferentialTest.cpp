// The random-graph differential test in ctest: 500 f64 graphs and 100 f32
// graphs agree on the reference interpreter before and after the default
// pipeline, and 500 f64 + 100 f32 graphs on the cpu backend against the
// reference (graphc-difftest [--cpu] runs many more).
#include <gtest/gtest.h>

#include "DiffTest.h"

namespace graphc {
namespace {

TEST(Differential, DefaultPipelineKeepsResultsF64) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed, ++checked)
    if (auto report = difftest::checkSeed(seed)) FAIL() << *report;
  EXPECT_EQ(checked, 500);
}

TEST(Differential, DefaultPipelineKeepsResultsF32) {
  difftest::RandomGraphOptions options;
  options.useF32 = true;
  for (uint64_t seed = 100001; seed <= 100100; ++seed)
    if (auto report = difftest::checkSeed(seed, options)) FAIL() << *report;
}

TEST(Differential, CpuBackendMatchesReferenceF64) {
  difftest::RandomGraphOptions options;
  options.cpuBackend = options.inputUpdates = true;
  int checked = 0;
  for (uint64_t seed = 500001; seed <= 500500; ++seed, ++checked)
    if (auto report = difftest::checkSeed(seed, options)) FAIL() << *report;
  EXPECT_EQ(checked, 500);
}

TEST(Differential, CpuBackendMatchesReferenceF32) {
  difftest::RandomGraphOptions options;
  options.cpuBackend = options.inputUpdates = true;
  options.useF32 = true;
  for (uint64_t seed = 600001; seed <= 600100; ++seed)
    if (auto report = difftest::checkSeed(seed, options)) FAIL() << *report;
}

TEST(Differential, GeneratorIsDeterministicAndVaried) {
  EXPECT_EQ(difftest::randomGraph(7), difftest::randomGraph(7));
  EXPECT_NE(difftest::randomGraph(7), difftest::randomGraph(8));
}

TEST(Differential, GeneratedInputUpdatesAreCommonAndVaried) {
  // The cpu runs above test in-place updates only as far as the generator
  // makes them: some results update an input, some of those are a
  // parameter itself (unchanged), most are computed.
  difftest::RandomGraphOptions options;
  options.inputUpdates = true;
  int withUpdates = 0, unchanged = 0;
  for (uint64_t seed = 500001; seed <= 500500; ++seed) {
    EXPECT_EQ(difftest::randomGraph(seed).find(" updates %"), std::string::npos) << "off by default";
    const std::string text = difftest::randomGraph(seed, options);
    if (text.find(" updates %") == std::string::npos) continue;
    ++withUpdates;
    if (text.find("return %p") != std::string::npos) ++unchanged;
  }
  EXPECT_GT(withUpdates, 100);
  EXPECT_LT(unchanged, withUpdates);
}

}  // namespace
}  // namespace graphc
