// Where a subcommand's text goes: a file (-o) or stdout.
#include <cstdio>
#include <fstream>

#include "Commands.h"

namespace graphc::tools {

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
