#include "ir/Diagnostics.h"

#include <cstdio>

#include <fmt/format.h>

namespace graphc::ir {

std::string_view SourceBuffer::lineText(int line) const {
  std::string_view t = text;
  int current = firstLine;
  size_t pos = 0;
  while (current < line) {
    size_t nl = t.find('\n', pos);
    if (nl == std::string_view::npos) return {};
    pos = nl + 1;
    ++current;
  }
  size_t end = t.find('\n', pos);
  return t.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

Diagnostic& Diagnostic::note(SourceLoc where, std::string msg) {
  notes.push_back(Diagnostic{Severity::Note, std::move(where), std::move(msg), {}});
  return *this;
}

namespace {
std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "";
}

void formatOne(std::string& out, const Diagnostic& d) {
  if (!d.loc.known()) {
    out += fmt::format("<unknown>: {}: {}\n", severityName(d.severity), d.message);
    return;
  }
  out += fmt::format("{}:{}:{}: {}: {}\n", d.loc.buffer->name, d.loc.line, d.loc.col, severityName(d.severity),
                     d.message);
  std::string_view line = d.loc.buffer->lineText(d.loc.line);
  out += "  ";
  out += line;
  out += "\n  ";
  // Keep tabs so that the caret lines up under tab-indented source.
  for (int i = 1; i < d.loc.col && i <= static_cast<int>(line.size()); ++i) out += line[i - 1] == '\t' ? '\t' : ' ';
  out += "^\n";
}
}  // namespace

std::string format(const Diagnostic& d) {
  std::string out;
  formatOne(out, d);
  for (const Diagnostic& n : d.notes) formatOne(out, n);
  return out;
}

DiagnosticEngine::~DiagnosticEngine() { flush(); }

Diagnostic& DiagnosticEngine::start(Severity s, SourceLoc loc, std::string message) {
  flush();
  if (s == Severity::Error) ++errors_;
  delivered_.push_back(Diagnostic{s, std::move(loc), std::move(message), {}});
  pending_ = true;
  return delivered_.back();
}

Diagnostic& DiagnosticEngine::error(SourceLoc loc, std::string message) {
  return start(Severity::Error, std::move(loc), std::move(message));
}

Diagnostic& DiagnosticEngine::warning(SourceLoc loc, std::string message) {
  return start(Severity::Warning, std::move(loc), std::move(message));
}

void DiagnosticEngine::flush() {
  if (!pending_) return;
  pending_ = false;
  if (handler_) handler_(delivered_.back());
}

const std::vector<Diagnostic>& DiagnosticEngine::all() {
  flush();
  return delivered_;
}

DiagnosticEngine::Handler printToStderr() {
  return [](const Diagnostic& d) { std::fputs(format(d).c_str(), stderr); };
}

}  // namespace graphc::ir
