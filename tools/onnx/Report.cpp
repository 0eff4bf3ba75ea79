#include "tools/onnx/Report.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "runtime/FileIO.h"

namespace graphc::onnxtest {

std::vector<SuiteTally> tally(const std::vector<TestResult>& results, const std::vector<std::string>& suites) {
  std::vector<SuiteTally> tallies;
  for (const std::string& suite : suites) {
    SuiteTally t;
    t.suite = suite;
    for (const TestResult& r : results) {
      if (r.suite != suite) continue;
      ++t.tests;
      if (!r.supported()) continue;
      ++t.supported;
      for (const auto& [b, why] : r.failures) ++(why.empty() ? t.passed : t.failed)[b];
    }
    tallies.push_back(t);
  }
  return tallies;
}

double passRate(const std::vector<SuiteTally>& tallies, Backend b) {
  int passed = 0, supported = 0;
  for (const SuiteTally& t : tallies) {
    passed += t.passed.count(b) ? t.passed.at(b) : 0;
    supported += t.supported;
  }
  return supported == 0 ? 1.0 : static_cast<double>(passed) / supported;
}

std::vector<Backend> backendsRun(const std::vector<TestResult>& results) {
  std::vector<Backend> out;
  for (Backend b : kBackends)
    if (std::any_of(results.begin(), results.end(), [&](const TestResult& r) { return r.failures.count(b) > 0; }))
      out.push_back(b);
  return out;
}

std::string terminalTable(const std::vector<SuiteTally>& tallies, const std::vector<Backend>& backends) {
  std::string out = fmt::format("{:<20} {:>6} {:>10}", "suite", "tests", "supported");
  for (Backend b : backends) out += fmt::format(" {:>17}", fmt::format("{} pass/fail", backendName(b)));
  out += "\n";
  for (const SuiteTally& t : tallies) {
    out += fmt::format("{:<20} {:>6} {:>10}", t.suite, t.tests, t.supported);
    for (Backend b : backends)
      out += fmt::format(" {:>17}", fmt::format("{}/{}", t.passed.count(b) ? t.passed.at(b) : 0,
                                                t.failed.count(b) ? t.failed.at(b) : 0));
    out += "\n";
  }
  for (Backend b : backends)
    out += fmt::format("{}: {:.1f}% of supported tests pass\n", backendName(b), 100 * passRate(tallies, b));
  return out;
}

namespace {

/// A table cell: no pipes or newlines.
std::string cell(std::string text) {
  for (char& ch : text)
    if (ch == '|' || ch == '\n') ch = ' ';
  return text;
}

/// Counts, most first, then by name.
std::vector<std::pair<std::string, int>> ranked(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> items(counts.begin(), counts.end());
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return items;
}

}  // namespace

std::string markdownSection(const std::vector<TestResult>& results, const std::vector<SuiteTally>& tallies,
                            const std::vector<Backend>& backends, const std::string& cudaNote) {
  std::string md = "| suite | tests | supported | unsupported |";
  std::string rule = "|---|---:|---:|---:|";
  for (Backend b : backends) {
    md += fmt::format(" {} passed | {} failed |", backendName(b), backendName(b));
    rule += "---:|---:|";
  }
  md += "\n" + rule + "\n";
  SuiteTally total;
  total.suite = "**all**";
  for (const SuiteTally& t : tallies) {
    md += fmt::format("| {} | {} | {} | {} |", t.suite, t.tests, t.supported, t.tests - t.supported);
    total.tests += t.tests;
    total.supported += t.supported;
    for (Backend b : backends) {
      const int p = t.passed.count(b) ? t.passed.at(b) : 0, f = t.failed.count(b) ? t.failed.at(b) : 0;
      md += fmt::format(" {} | {} |", p, f);
      total.passed[b] += p;
      total.failed[b] += f;
    }
    md += "\n";
  }
  md += fmt::format("| {} | {} | {} | {} |", total.suite, total.tests, total.supported, total.tests - total.supported);
  for (Backend b : backends) md += fmt::format(" {} | {} |", total.passed[b], total.failed[b]);
  md += "\n\n";
  for (Backend b : backends)
    md += fmt::format("- {}: **{:.1f}%** of the supported tests pass ({} of {}).\n", backendName(b),
                      100 * passRate(tallies, b), total.passed[b], total.supported);
  if (!cudaNote.empty()) md += fmt::format("- cuda: not run here ({}).\n", cudaNote);
  if (std::find(backends.begin(), backends.end(), Backend::Nvrtc) != backends.end())
    md +=
        "- nvrtc: the cuda backend's kernels for each test, generated and compiled by NVRTC for sm_80 and sm_90 "
        "(many tests to a module); compiled, not run.\n";

  md += "\n### Failed tests\n\n";
  bool anyFailed = false;
  for (const TestResult& r : results)
    for (const auto& [b, why] : r.failures)
      if (!why.empty()) {
        if (!anyFailed) md += "| suite | test | backend | first mismatch or error |\n|---|---|---|---|\n";
        anyFailed = true;
        md += fmt::format("| {} | {} | {} | {} |\n", r.suite, r.name, backendName(b), cell(why));
      }
  if (!anyFailed) md += "None.\n";

  std::map<std::string, int> blockedBy, features;
  for (const TestResult& r : results) {
    for (const std::string& op : r.unsupportedOps) ++blockedBy[op];
    if (r.unsupportedOps.empty() && !r.unsupportedFeature.empty()) ++features[r.unsupportedFeature];
  }
  md +=
      "\n### Unsupported ops, by the number of tests they block\n\n"
      "A test counts once for each op it uses that graphc does not map.\n\n";
  md += "| op | tests | op | tests | op | tests |\n|---|---:|---|---:|---|---:|\n";
  std::vector<std::pair<std::string, int>> ops = ranked(blockedBy);
  for (size_t k = 0; k < ops.size(); k += 3) {
    md += "|";
    for (size_t j = k; j < k + 3; ++j)
      md += j < ops.size() ? fmt::format(" {} | {} |", ops[j].first, ops[j].second) : std::string("  |  |");
    md += "\n";
  }
  md += "\n### Other unsupported features (tests whose ops all map)\n\n| feature | tests |\n|---|---:|\n";
  for (const auto& [feature, count] : ranked(features)) md += fmt::format("| {} | {} |\n", cell(feature), count);
  return md;
}

void writeSection(const std::string& file, const std::string& name, const std::string& body) {
  std::string text = runtime::readFile(file);
  const std::string begin = fmt::format("<!-- BEGIN {} -->", name), end = fmt::format("<!-- END {} -->", name);
  const std::string section = begin + "\n" + body + end;
  const size_t b = text.find(begin), e = text.find(end);
  if (b != std::string::npos && e != std::string::npos && e > b)
    text.replace(b, e + end.size() - b, section);
  else
    text += (text.empty() || text.back() == '\n' ? "" : "\n") + section + "\n";
  std::ofstream out(file);
  out << text;
  if (!out) throw ir::Error(fmt::format("{}: cannot write", file));
}

}  // namespace graphc::onnxtest
