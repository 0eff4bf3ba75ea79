// The graphc subcommands. Each returns the process exit status:
// 0 success, 1 a diagnosed user error (bad graph, bad input), 2 usage.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/api/Api.h"

namespace graphc::tools {

/// run and bench: the file, how to compile it (the API's one options
/// type) and the inputs.
struct RunCommandOptions {
  std::string file;
  graphc::CompileOptions compile;
  std::vector<std::string> inputs;  // NAME=PATH.npy | NAME=rand[:SEED]
  std::vector<std::string> dims;    // SYM=N
  std::string saveOutputs;
  bool printOutputs = false;
  bool timePasses = false;
  int benchIters = 0;         // graphc bench: time this many calls instead of printing outputs
  bool benchProfile = false;  // graphc bench --profile: then the time per step
};

struct OptCommandOptions {
  std::string file;  // "-" reads stdin
  std::string output = "-";
  std::string passes;
  bool passesGiven = false;
  bool printAfterAll = false;
  std::vector<std::string> printAfter;
  bool printAfterChange = false;
  bool verifyEach = true;
  bool timePasses = false;
  bool printWeights = false;
  bool splitInputFile = false;
  bool verifyDiagnostics = false;
};

struct CompileCommandOptions {
  std::string file;
  graphc::CompileOptions compile;
  bool deviceGiven = false;  // --device on the command line
  std::string emit = "graph";
  std::string output = "-";
  bool timePasses = false;
};

struct ExportCommandOptions {
  std::string file;
  graphc::CompileOptions compile;
  graphc::ExportOptions exportOptions;
  std::string output;
  std::vector<std::string> dims;  // SYM=N pins a symbolic size; SYM=? keeps it symbolic
};

struct ImportCommandOptions {
  std::string file;
  std::string output = "-";
  std::vector<std::string> inputs;  // NAME=PATH: values to specialise on
};

struct CacheCommandOptions {
  bool prune = false;  // remove the least recently used entries beyond the bound
  bool clear = false;  // remove every entry
};

/// A bad flag value, found while a subcommand runs: exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs a subcommand's body; an error it throws is printed (a CompileError
/// as its located diagnostics, an ir::Error or a UsageError as `graphc:
/// error: ...`) and the exit status is 1 (2 for a UsageError).
int withErrorsReported(const std::function<int()>& body);

/// A repeatable flag's NAME=VALUE (a leading '%' of NAME dropped); throws
/// UsageError naming `flag` otherwise.
std::pair<std::string, std::string> splitAssignment(const std::string& text, std::string_view flag);
/// A non-negative integer; throws UsageError naming `what` otherwise.
int64_t parseInt(const std::string& text, std::string_view what);

/// Writes `text` to `path`, or to stdout for "-"; false (reported) when the
/// file cannot be written.
bool writeOutput(const std::string& path, const std::string& text);

int runCommand(const RunCommandOptions& options);
int compileCommand(const CompileCommandOptions& options);
int optCommand(const OptCommandOptions& options);
int importCommand(const ImportCommandOptions& options);
int exportCommand(const ExportCommandOptions& options);
int cacheCommand(const CacheCommandOptions& options);
int listPasses();

}  // namespace graphc::tools
