// The conformance report: a plain table for the terminal and a Markdown
// section for docs/onnx.md, both from the same tallies.
#pragma once

#include <string>
#include <vector>

#include "tools/onnx/Conformance.h"

namespace graphc::onnxtest {

struct SuiteTally {
  std::string suite;
  int tests = 0, supported = 0;
  std::map<Backend, int> passed, failed;
};

std::vector<SuiteTally> tally(const std::vector<TestResult>& results, const std::vector<std::string>& suites);

/// Passed / supported over all suites for `b` (1 when nothing is supported).
double passRate(const std::vector<SuiteTally>& tallies, Backend b);

/// Backends that ran, in kBackends order.
std::vector<Backend> backendsRun(const std::vector<TestResult>& results);

std::string terminalTable(const std::vector<SuiteTally>& tallies, const std::vector<Backend>& backends);

/// The generated section of docs/onnx.md: per-suite table, failures by name
/// and why, unsupported ops ranked by the tests they block, and the other
/// unsupported features of tests whose ops all map. `cudaNote` says why
/// cuda did not run, when it did not.
std::string markdownSection(const std::vector<TestResult>& results, const std::vector<SuiteTally>& tallies,
                            const std::vector<Backend>& backends, const std::string& cudaNote);

/// Replaces the text between `<!-- BEGIN name -->` and `<!-- END name -->`
/// in `file` (appending the section when the markers are missing).
void writeSection(const std::string& file, const std::string& name, const std::string& body);

}  // namespace graphc::onnxtest
