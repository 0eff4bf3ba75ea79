// The graphc subcommands. Each returns the process exit status:
// 0 success, 1 a diagnosed user error (bad graph, bad input), 2 usage.
#pragma once

#include <string>
#include <vector>

namespace graphc::tools {

struct RunOptions {
  std::string file;
  std::string device = "reference";
  std::vector<std::string> inputs;  // NAME=PATH.npy | NAME=rand[:SEED]
  std::vector<std::string> dims;    // SYM=N
  std::string saveOutputs;
  bool printOutputs = false;
};

struct OptOptions {
  std::string file;  // "-" reads stdin
  std::string output = "-";
  std::string passes;
  bool passesGiven = false;
  bool printAfterAll = false;
  std::vector<std::string> printAfter;
  bool printAfterChange = false;
  bool verifyEach = true;
  bool timePasses = false;
  bool splitInputFile = false;
  bool verifyDiagnostics = false;
};

struct CompileOptions {
  std::string file;
  std::string device;
  std::string arch;
  std::string emit = "graph";
  std::string output = "-";
};

/// Writes `text` to `path`, or to stdout for "-"; false (reported) when the
/// file cannot be written.
bool writeOutput(const std::string& path, const std::string& text);

int runCommand(const RunOptions& options);
int compileCommand(const CompileOptions& options);
int optCommand(const OptOptions& options);
int listPasses();

}  // namespace graphc::tools
