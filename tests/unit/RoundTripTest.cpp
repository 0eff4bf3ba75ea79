// The round-trip contract, on every .graph file of the project (lit tests,
// examples, golden cases): print(parse(text)) re-parses and prints
// identically, and so does the dump after every pass of the default
// pipeline. Files under tests/lit/invalid are expected to fail, chunk by
// chunk, with located errors; every other chunk must parse.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "TestUtil.h"
#include "frontend/parser/Parser.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> graphFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"tests/lit", "examples", "tests/golden/cases"}) {
    fs::path root = fs::path(GRAPHC_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root))
      if (entry.path().extension() == ".graph") files.push_back(fs::relative(entry.path(), GRAPHC_SOURCE_DIR).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool onlyComments(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line.compare(first, 2, "//") != 0) return false;
  }
  return true;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

/// Parses printed text and checks that it prints the same.
void expectFixedPoint(const std::string& printed, const std::string& what) {
  ir::DiagnosticEngine diags;
  auto again = frontend::parseString(printed, diags, what);
  std::string messages;
  for (const auto& d : diags.all()) messages += ir::format(d);
  ASSERT_TRUE(again) << what << " does not re-parse:\n" << messages << printed;
  EXPECT_EQ(ir::print(*again), printed) << what << " does not print identically";
}

TEST_P(RoundTrip, PrintParsePrintIsAFixedPoint) {
  const std::string& file = GetParam();
  const bool invalid = file.find("/invalid/") != std::string::npos;
  ir::DiagnosticEngine readDiags;
  auto whole = frontend::readSourceFile((fs::path(GRAPHC_SOURCE_DIR) / file).string(), readDiags);
  ASSERT_TRUE(whole);
  for (const auto& chunk : frontend::splitInputFile(*whole)) {
    if (onlyComments(chunk->text)) continue;  // a lit file that only holds RUN lines
    ir::DiagnosticEngine diags;
    auto m = frontend::parse(chunk, diags);
    if (invalid) {
      EXPECT_FALSE(m) << file << ":" << chunk->firstLine << ": chunk of an invalid-input file parsed";
      for (const auto& d : diags.all()) EXPECT_TRUE(d.loc.known()) << "unlocated: " << d.message;
      continue;
    }
    std::string messages;
    for (const auto& d : diags.all()) messages += ir::format(d);
    ASSERT_TRUE(m) << messages;
    expectFixedPoint(ir::print(*m), file + " (printed)");

    passes::PassManagerOptions options;
    options.checkChangedFlag = true;
    passes::PassManager pm(options);
    passes::addDefaultPipeline(pm);
    pm.afterPass = [&](const passes::Pass& pass, const ir::Module& after, bool) {
      expectFixedPoint(ir::print(after), file + " after " + std::string(pass.name()));
    };
    EXPECT_TRUE(pm.run(*m, diags));
  }
}

INSTANTIATE_TEST_SUITE_P(AllGraphFiles, RoundTrip, ::testing::ValuesIn(graphFiles()),
                         [](const auto& info) { return testing::paramName(info.param); });

}  // namespace
}  // namespace graphc
