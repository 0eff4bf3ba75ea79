#include "frontend/parser/DiagnosticVerifier.h"

#include <charconv>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace graphc::frontend {

namespace {

struct Expectation {
  ir::Severity severity;
  int line;         // the line the diagnostic must point at
  int commentLine;  // where the expectation is written
  std::string text;
  bool met = false;
};

/// Reads `expected-KIND[@WHERE] {{TEXT}}` at `at` (just past "expected-");
/// WHERE is +N, -N, above or below. Scanned by hand: std::regex recurses
/// per character and overflows the stack on a 100 KB line.
std::optional<Expectation> readOne(std::string_view line, size_t& at, int number) {
  auto take = [&](std::string_view word) {
    if (line.substr(at, word.size()) != word) return false;
    at += word.size();
    return true;
  };
  Expectation e{ir::Severity::Error, number, number, {}, false};
  if (take("error"))
    e.severity = ir::Severity::Error;
  else if (take("note"))
    e.severity = ir::Severity::Note;
  else if (take("warning"))
    e.severity = ir::Severity::Warning;
  else
    return std::nullopt;
  if (take("@")) {
    if (take("above")) {
      e.line = number - 1;
    } else if (take("below")) {
      e.line = number + 1;
    } else {
      const bool minus = line.substr(at, 1) == "-";
      if (!take("+") && !take("-")) return std::nullopt;
      int offset = 0;
      auto [end, ec] = std::from_chars(line.data() + at, line.data() + line.size(), offset);
      if (ec != std::errc() || end == line.data() + at) return std::nullopt;
      at = static_cast<size_t>(end - line.data());
      e.line = minus ? number - offset : number + offset;
    }
  }
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
  if (!take("{{")) return std::nullopt;
  const size_t close = line.find("}}", at);
  if (close == std::string_view::npos) return std::nullopt;
  e.text = std::string(line.substr(at, close - at));
  at = close + 2;
  return e;
}

std::vector<Expectation> readExpectations(const ir::SourceBuffer& buffer) {
  std::vector<Expectation> out;
  std::string_view text = buffer.text;
  int number = buffer.firstLine;
  for (size_t start = 0; start <= text.size(); ++number) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    for (size_t at = line.find("expected-"); at != std::string_view::npos; at = line.find("expected-", at)) {
      at += 9;
      if (std::optional<Expectation> e = readOne(line, at, number)) out.push_back(std::move(*e));
    }
    start = end + 1;
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
      std::string where =
          d->loc.known() ? fmt::format("{}:{}:{}", d->loc.buffer->name, d->loc.line, d->loc.col) : buffer.name;
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
