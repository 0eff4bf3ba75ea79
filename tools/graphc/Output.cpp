// What every subcommand shares: where its text goes (a file, -o, or
// stdout), how its errors are reported (stderr, with the exit status), how
// its flag values are read.
#include <charconv>
#include <cstdio>
#include <fstream>
#include <functional>

#include <fmt/format.h>

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
  } catch (const UsageError& e) {
    std::fprintf(stderr, "graphc: error: %s\n", e.what());
    return 2;
  }
  return 1;
}

std::pair<std::string, std::string> splitAssignment(const std::string& text, std::string_view flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(fmt::format("{} expects NAME=VALUE, got '{}'", flag, text));
  std::string name = text.substr(0, eq);
  if (name[0] == '%') name.erase(0, 1);
  return {name, text.substr(eq + 1)};
}

int64_t parseInt(const std::string& text, std::string_view what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw UsageError(fmt::format("{}: '{}' is not a non-negative integer", what, text));
  return v;
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
