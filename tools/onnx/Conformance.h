// The ONNX conformance runner: each test of ONNX's backend test data
// (model.onnx + test_data_set_N/{input,output}_K.pb) is imported, run on
// the reference interpreter, the cpu backend and (with a device) the cuda
// backend, and each output compared with the expected one as ONNX's
// backend runner compares (rtol 1e-3, atol 1e-7; integers and bools exact).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace graphc::onnxtest {

enum class Backend { Reference, Cpu, Cuda, Nvrtc };
/// Nvrtc: the cuda backend's kernels compiled for sm_80 and sm_90 (no GPU
/// needed), for machines that cannot run them.
inline constexpr Backend kBackends[] = {Backend::Reference, Backend::Cpu, Backend::Cuda, Backend::Nvrtc};
const char* backendName(Backend b);

struct TestResult {
  std::string suite, name;
  /// The graph after the cuda backend's pipeline, for the NVRTC check of
  /// its kernels; null when the test did not get that far.
  std::shared_ptr<const void> optimized;
  /// Set when graphc does not support what the test uses: the unsupported
  /// op types (all of them), else the first unsupported feature.
  std::vector<std::string> unsupportedOps;
  std::string unsupportedFeature;
  /// Per backend that ran: empty when every output matched, else why not.
  std::map<Backend, std::string> failures;
  bool supported() const { return unsupportedOps.empty() && unsupportedFeature.empty(); }
  bool passed(Backend b) const { return failures.count(b) && failures.at(b).empty(); }
};

struct RunOptions {
  bool cuda = false;  // run the cuda backend too (a device was found)
  /// |got - want| <= atol + rtol |want|: ONNX's backend runner's by default.
  double rtol = 1e-3, atol = 1e-7;
};

/// The test folders of `suiteDir` (those holding a model.onnx), sorted.
std::vector<std::filesystem::path> testsOf(const std::filesystem::path& suiteDir);

/// Runs one test; never throws (a failure is a result).
TestResult runTest(const std::filesystem::path& testDir, const std::string& suite, const RunOptions& options);

/// Compiles the cuda kernels of every test that reached the cpu backend
/// with NVRTC for sm_80 and sm_90, many tests to a module (NVRTC's start-up
/// dominates small modules), and records the Nvrtc result of each.
void compileWithNvrtc(std::vector<TestResult>& results);

}  // namespace graphc::onnxtest
