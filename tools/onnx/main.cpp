// graphc-onnx-conformance: runs ONNX's backend test data through graphc and
// reports per suite how many tests are supported and pass on each backend.
//
//   graphc-onnx-conformance [--data DIR] [--suites node,simple,...] [--filter TEXT]
//                           [--rtol R] [--atol A] [--markdown FILE]
//                           [--min-pass-rate R] [--min-node-supported N] [--all-supported] [-v]
//
// With --markdown it rewrites the generated section of FILE (docs/onnx.md).
// With --min-pass-rate / --min-node-supported it exits 1 when a target is
// missed (the ctest sets both). Exit 2: usage.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "codegen/Backend.h"
#include "tools/onnx/Report.h"

int main(int argc, char** argv) {
  using namespace graphc::onnxtest;
  CLI::App app{"graphc-onnx-conformance: ONNX backend test data through graphc"};
  std::string data = "/usr/share/libonnx-testdata/data";
  std::vector<std::string> suites{"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string filter, markdown;
  double minPassRate = 0;
  int minNodeSupported = 0;
  bool verbose = false, nvrtc = false, allSupported = false;
  app.add_option("--data", data, "The test data (Debian's libonnx-testdata)");
  app.add_option("--suites", suites, "Suites (folders of --data)")->delimiter(',');
  app.add_option("--filter", filter, "Run only tests whose name contains TEXT");
  app.add_option("--markdown", markdown, "Rewrite the generated conformance section of FILE");
  app.add_option("--min-pass-rate", minPassRate, "Fail unless every backend run passes this share of supported tests");
  app.add_option("--min-node-supported", minNodeSupported, "Fail unless this many node tests are supported");
  app.add_flag("--all-supported", allSupported, "Fail unless every test imports (a suite of real models)");
  app.add_flag("-v,--verbose", verbose, "Print each test's result");
  app.add_flag("--nvrtc", nvrtc, "Without a GPU: compile each test's cuda kernels with NVRTC (sm_80, sm_90)");
  RunOptions options;
  app.add_option("--rtol", options.rtol, "Relative tolerance (ONNX's runner: 1e-3)");
  app.add_option("--atol", options.atol, "Absolute tolerance (ONNX's runner: 1e-7)");
  CLI11_PARSE(app, argc, argv);

  using graphc::codegen::Device;
  const bool hasCuda = graphc::codegen::hasBackend(Device::Cuda);
  const std::string cudaNote = hasCuda ? graphc::codegen::backendFor(Device::Cuda).unavailableReason()
                                       : "this graphc was built without the cuda backend";
  options.cuda = hasCuda && cudaNote.empty();

  std::vector<TestResult> results;
  for (const std::string& suite : suites) {
    const std::filesystem::path dir = std::filesystem::path(data) / suite;
    if (!std::filesystem::is_directory(dir)) {
      std::fprintf(stderr, "graphc-onnx-conformance: error: %s is not a folder (is libonnx-testdata installed?)\n",
                   dir.c_str());
      return 1;
    }
    for (const std::filesystem::path& test : testsOf(dir)) {
      if (!filter.empty() && test.filename().string().find(filter) == std::string::npos) continue;
      TestResult r = runTest(test, suite, options);
      if (verbose) {
        std::string status =
            !r.supported()
                ? "unsupported: " + (r.unsupportedOps.empty() ? r.unsupportedFeature
                                                              : fmt::format("{}", fmt::join(r.unsupportedOps, ", ")))
                : "";
        for (const auto& [b, why] : r.failures)
          status += fmt::format("{}{} {}", status.empty() ? "" : "; ", backendName(b), why.empty() ? "ok" : why);
        std::printf("%s/%s: %s\n", suite.c_str(), r.name.c_str(), status.c_str());
        std::fflush(stdout);
      }
      results.push_back(std::move(r));
    }
  }

  if (nvrtc && !options.cuda) {
    if (!hasCuda) {
      std::fputs("graphc-onnx-conformance: --nvrtc: this build has no cuda backend\n", stderr);
      return 2;
    }
    compileWithNvrtc(results);
  }

  const std::vector<SuiteTally> tallies = tally(results, suites);
  const std::vector<Backend> backends = backendsRun(results);
  std::fputs(terminalTable(tallies, backends).c_str(), stdout);
  if (!options.cuda) std::printf("cuda: not run (%s)\n", cudaNote.c_str());
  if (!markdown.empty()) {
    writeSection(markdown, "conformance", markdownSection(results, tallies, backends, options.cuda ? "" : cudaNote));
    std::printf("wrote the conformance section of %s\n", markdown.c_str());
  }

  int status = 0;
  for (Backend b : backends)
    if (passRate(tallies, b) < minPassRate) {
      std::fprintf(stderr,
                   "graphc-onnx-conformance: %s passes %.1f%% of the supported tests, under the target %.1f%%\n",
                   backendName(b), 100 * passRate(tallies, b), 100 * minPassRate);
      status = 1;
    }
  for (const SuiteTally& t : tallies)
    if (t.suite == "node" && t.supported < minNodeSupported) {
      std::fprintf(stderr, "graphc-onnx-conformance: %d node tests are supported, under the target %d\n", t.supported,
                   minNodeSupported);
      status = 1;
    }
  if (allSupported)
    for (const TestResult& r : results)
      if (!r.supported()) {
        std::fprintf(stderr, "graphc-onnx-conformance: %s/%s is not supported\n", r.suite.c_str(), r.name.c_str());
        status = 1;
      }
  return status;
}
