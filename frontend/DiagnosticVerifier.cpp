#include "frontend/DiagnosticVerifier.h"

#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace graphc::frontend {

namespace {

struct Expectation {
  ir::Severity severity;
  int line;        // the line the diagnostic must point at
  int commentLine; // where the expectation is written
  std::string text;
  bool met = false;
};

std::vector<Expectation> readExpectations(const ir::SourceBuffer& buffer) {
  static const std::regex re(R"(expected-(error|note|warning)(@([+-][0-9]+|above|below))?\s*\{\{(.*?)\}\})");
  std::vector<Expectation> out;
  std::istringstream lines(buffer.text);
  std::string line;
  for (int number = buffer.firstLine; std::getline(lines, line); ++number) {
    for (std::sregex_iterator it(line.begin(), line.end(), re), end; it != end; ++it) {
      const std::smatch& m = *it;
      ir::Severity s = m[1] == "error" ? ir::Severity::Error : m[1] == "note" ? ir::Severity::Note : ir::Severity::Warning;
      int target = number;
      std::string at = m[3];
      if (at == "above") target = number - 1;
      else if (at == "below") target = number + 1;
      else if (!at.empty()) target = number + std::stoi(at);
      out.push_back({s, target, number, m[4], false});
    }
  }
  return out;
}

std::string_view severityName(ir::Severity s) {
  return s == ir::Severity::Error ? "error" : s == ir::Severity::Note ? "note" : "warning";
}

}  // namespace

std::string verifyDiagnostics(const ir::SourceBuffer& buffer, const std::vector<ir::Diagnostic>& produced) {
  std::vector<Expectation> expected = readExpectations(buffer);
  std::vector<const ir::Diagnostic*> flat;
  for (const ir::Diagnostic& d : produced) {
    flat.push_back(&d);
    for (const ir::Diagnostic& n : d.notes) flat.push_back(&n);
  }
  std::string report;
  for (const ir::Diagnostic* d : flat) {
    bool matched = false;
    for (Expectation& e : expected) {
      if (e.met || e.severity != d->severity || !d->loc.known() || e.line != d->loc.line) continue;
      if (d->message.find(e.text) == std::string::npos) continue;
      e.met = matched = true;
      break;
    }
    if (!matched) {
      std::string where = d->loc.known() ? fmt::format("{}:{}:{}", d->loc.buffer->name, d->loc.line, d->loc.col)
                                         : buffer.name;
      report += fmt::format("{}: error: unexpected {}: {}\n", where, severityName(d->severity), d->message);
    }
  }
  for (const Expectation& e : expected)
    if (!e.met)
      report += fmt::format("{}:{}: error: expected {} \"{}\" at line {} was not produced\n", buffer.name,
                            e.commentLine, severityName(e.severity), e.text, e.line);
  return report;
}

}  // namespace graphc::frontend
