// The project's own graphs as test inputs: every runnable chunk of
// examples/ and the lit inputs, shared by the backend tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "frontend/Parser.h"
#include "ir/Graph.h"

namespace graphc::testing {

namespace fs = std::filesystem;

/// The text of each `// -----` chunk of a file (the whole file if none).
inline std::vector<std::string> chunksOf(const fs::path& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> chunks;
  size_t start = 0;
  while (true) {
    size_t cut = text.find("// -----", start);
    chunks.push_back(text.substr(start, cut == std::string::npos ? std::string::npos : cut - start));
    if (cut == std::string::npos) break;
    start = cut + 8;
  }
  return chunks;
}

/// Whether an eigh's eigenvectors feed another op: their signs are free
/// (LAPACK and the Jacobi solver pick differently, as torch's backends do),
/// so what is computed from them cannot be compared element by element.
inline bool computesOnEigenvectors(const ir::Region& r) {
  for (const auto& n : r.nodes()) {
    for (const ir::Value* v : n->operands)
      if (v->definingNode() && v->definingNode()->op == ir::OpId::Eigh && v->index() == 1) return true;
    for (const auto& region : n->regions())
      if (computesOnEigenvectors(*region)) return true;
  }
  return false;
}

/// Every runnable graph of the project: each chunk of the examples and the
/// lit inputs that parses and holds no expected error, as "path#chunk".
inline std::vector<std::string> projectGraphs() {
  std::vector<std::string> out;
  const fs::path root(GRAPHC_SOURCE_DIR);
  for (const char* dir : {"examples", "tests/lit/run", "tests/lit/passes", "tests/lit/opt", "tests/lit/parse", "tests/lit/cpu", "tests/lit/cuda"})
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() != ".graph") continue;
      const std::vector<std::string> chunks = chunksOf(e.path());
      for (size_t c = 0; c < chunks.size(); ++c) {
        // Files of expected errors test the rejection, not numbers.
        if (chunks[c].find("expected-error") != std::string::npos || chunks[0].find("RUN: not ") != std::string::npos) continue;
        ir::DiagnosticEngine diags;
        auto m = frontend::parseString(chunks[c], diags, "chunk.graph");
        if (!m || !m->entry() || computesOnEigenvectors(m->entry()->body)) continue;
        out.push_back(fmt::format("{}#{}", fs::relative(e.path(), root).string(), c));
      }
    }
  std::sort(out.begin(), out.end());
  return out;
}

inline bool hasGemm(const ir::Region& r) {
  for (const auto& n : r.nodes()) {
    if (n->op == ir::OpId::Matmul || n->op == ir::OpId::Linear) return true;
    for (const auto& region : n->regions())
      if (hasGemm(*region)) return true;
  }
  return false;
}

}  // namespace graphc::testing
