// Source locations and diagnostics in the MLIR/clang style:
//
//   file.graph:3:12: error: use of undefined value '%q'
//     %y = relu(%q)
//               ^
//
// The parser, the verifier and every pass report through a DiagnosticEngine,
// so the CLI can print them, --verify-diagnostics can match them and an
// embedding program can collect them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace graphc::ir {

/// A named text buffer (a file, or one `// -----` chunk of it). Line numbers
/// of a chunk count from `firstLine` so they match the whole file.
struct SourceBuffer {
  std::string name;
  std::string text;
  int firstLine = 1;

  /// The text of the given (file-relative) line, without its newline.
  std::string_view lineText(int line) const;
};

struct SourceLoc {
  std::shared_ptr<const SourceBuffer> buffer;  // null: no source (built by API)
  int line = 0;
  int col = 0;

  bool known() const { return buffer != nullptr; }
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
  std::vector<Diagnostic> notes;

  /// Attaches a note pointing at another place that matters.
  Diagnostic& note(SourceLoc where, std::string msg);
};

/// Renders `file:line:col: error: msg`, the source line and a caret, then
/// each note the same way.
std::string format(const Diagnostic& d);

class DiagnosticEngine {
 public:
  using Handler = std::function<void(const Diagnostic&)>;

  /// Without a handler, diagnostics are only collected.
  explicit DiagnosticEngine(Handler handler = nullptr) : handler_(std::move(handler)) {}
  ~DiagnosticEngine();
  DiagnosticEngine(const DiagnosticEngine&) = delete;
  DiagnosticEngine& operator=(const DiagnosticEngine&) = delete;

  /// Starts an error; it is delivered when the next diagnostic starts or
  /// on flush(), so that notes can be attached to the returned reference.
  Diagnostic& error(SourceLoc loc, std::string message);
  Diagnostic& warning(SourceLoc loc, std::string message);
  void flush();

  int errorCount() const { return errors_; }
  bool hadError() const { return errors_ > 0; }
  /// Every diagnostic reported so far (flushed first).
  const std::vector<Diagnostic>& all();

 private:
  Diagnostic& start(Severity s, SourceLoc loc, std::string message);

  Handler handler_;
  std::vector<Diagnostic> delivered_;
  bool pending_ = false;
  int errors_ = 0;
};

/// A handler that prints each diagnostic to stderr.
DiagnosticEngine::Handler printToStderr();

/// Thrown by API entry points that have no DiagnosticEngine to report to.
class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/// An Error that belongs at a place in the input (a backend rejecting a
/// node): the CLI reports it as `file:line:col: error:`.
class LocatedError : public Error {
 public:
  LocatedError(SourceLoc loc, std::string message) : Error(std::move(message)), loc(std::move(loc)) {}
  SourceLoc loc;
};

}  // namespace graphc::ir
