// Where a subcommand's text goes: a file (-o) or stdout; diagnostics to stderr.
#include <cstdio>
#include <fstream>
#include <functional>

#include "Commands.h"

namespace graphc::tools {

int withErrorsReported(const std::function<int()>& body) {
  try {
    return body();
  } catch (const graphc::CompileError& e) {  // located diagnostics, as the parser or a pass reported them
    for (const ir::Diagnostic& d : e.diagnostics) std::fputs(ir::format(d).c_str(), stderr);
  } catch (const ir::LocatedError& e) {  // a run-time error at a node (the reference interpreter's)
    std::fputs(ir::format(ir::Diagnostic{ir::Severity::Error, e.loc, e.what(), {}}).c_str(), stderr);
  } catch (const ir::Error& e) {
    std::fprintf(stderr, "graphc: error: %s\n", e.what());
  }
  return 1;
}

bool writeOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fputs(text.c_str(), stdout);
    return true;
  }
  std::ofstream file(path);
  file << text;
  if (!file) {
    std::fprintf(stderr, "graphc: error: cannot write '%s'\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace graphc::tools
