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
  options.cpuBackend = true;
  int checked = 0;
  for (uint64_t seed = 500001; seed <= 500500; ++seed, ++checked)
    if (auto report = difftest::checkSeed(seed, options)) FAIL() << *report;
  EXPECT_EQ(checked, 500);
}

TEST(Differential, CpuBackendMatchesReferenceF32) {
  difftest::RandomGraphOptions options;
  options.cpuBackend = true;
  options.useF32 = true;
  for (uint64_t seed = 600001; seed <= 600100; ++seed)
    if (auto report = difftest::checkSeed(seed, options)) FAIL() << *report;
}

TEST(Differential, GeneratorIsDeterministicAndVaried) {
  EXPECT_EQ(difftest::randomGraph(7), difftest::randomGraph(7));
  EXPECT_NE(difftest::randomGraph(7), difftest::randomGraph(8));
}

}  // namespace
}  // namespace graphc
