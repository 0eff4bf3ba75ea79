#include "ir/Diagnostics.h"

#include <algorithm>
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

/// What a diagnostic quotes of a long line: a window around the column,
/// as clang does, so a megabyte-long line costs a line of output.
constexpr int kLineWindow = 120;
/// Messages quote names from the input; past this they are cut.
constexpr size_t kMessageLimit = 1000;

void formatOne(std::string& out, const Diagnostic& d) {
  std::string_view message = d.message;
  std::string cut;
  if (message.size() > kMessageLimit) {
    cut = fmt::format("{}... ({} more characters)", message.substr(0, kMessageLimit), message.size() - kMessageLimit);
    message = cut;
  }
  if (!d.loc.known()) {
    out += fmt::format("<unknown>: {}: {}\n", severityName(d.severity), message);
    return;
  }
  out +=
      fmt::format("{}:{}:{}: {}: {}\n", d.loc.buffer->name, d.loc.line, d.loc.col, severityName(d.severity), message);
  std::string_view line = d.loc.buffer->lineText(d.loc.line);
  int col = d.loc.col;
  std::string_view before, after;
  if (static_cast<int>(line.size()) > kLineWindow) {
    // The window starts half a window before the column (or at the line's
    // start) and is marked with "..." where it cuts the line.
    const int start = std::clamp(col - 1 - kLineWindow / 2, 0, static_cast<int>(line.size()) - kLineWindow);
    if (start > 0) before = "...";
    if (start + kLineWindow < static_cast<int>(line.size())) after = "...";
    line = line.substr(static_cast<size_t>(start), kLineWindow);
    col = col - start + static_cast<int>(before.size());
  }
  out += "  ";
  out += before;
  out += line;
  out += after;
  out += "\n  ";
  // Keep tabs so that the caret lines up under tab-indented source.
  for (int i = 1; i < col; ++i) {
    const int at = i - 1 - static_cast<int>(before.size());  // negative inside the "..."
    if (at >= static_cast<int>(line.size())) break;
    out += at >= 0 && line[static_cast<size_t>(at)] == '\t' ? '\t' : ' ';
  }
  out += "^\n";
}
}  // namespace

std::string format(const Diagnostic& d) {
  std::string out;
  formatOne(out, d);
  for (const Diagnostic& n : d.notes) formatOne(out, n);
  return out;
}

DiagnosticEngine::~DiagnosticEngine() {
  // A destructor must not throw (it may run while an exception unwinds):
  // a diagnostic that cannot be delivered now is dropped.
  try {
    flush();
  } catch (...) {
  }
}

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
