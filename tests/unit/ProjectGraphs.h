// The project's own graphs as test inputs: every runnable chunk of
// examples/ and the lit inputs, shared by the backend tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "frontend/parser/Parser.h"
#include "ir/Graph.h"
#include "runtime/Random.h"

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
  for (const char* dir : {"examples", "tests/lit/run", "tests/lit/passes", "tests/lit/opt", "tests/lit/parse",
                          "tests/lit/cpu", "tests/lit/cuda"})
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() != ".graph") continue;
      const std::vector<std::string> chunks = chunksOf(e.path());
      for (size_t c = 0; c < chunks.size(); ++c) {
        // Files of expected errors test the rejection, not numbers.
        if (chunks[c].find("expected-error") != std::string::npos || chunks[0].find("RUN: not ") != std::string::npos)
          continue;
        ir::DiagnosticEngine diags;
        auto m = frontend::parseString(chunks[c], diags, "chunk.graph");
        if (!m || !m->entry() || computesOnEigenvectors(m->entry()->body)) continue;
        out.push_back(fmt::format("{}#{}", fs::relative(e.path(), root).string(), c));
      }
    }
  std::sort(out.begin(), out.end());
  return out;
}

/// For each value read as the indices of an index_select or gather, or as
/// a scatter_nd's one coordinate (in a fused body too, followed out to the
/// fused op's operand), the size of the dim it indexes.
inline void indexedSizes(const ir::Region& r, std::map<const ir::Value*, ir::Dim>& out) {
  auto outer = [](const ir::Value* v) {
    while (!v->definingNode() && v->parentRegion()->parentNode() &&
           v->parentRegion()->parentNode()->op == ir::OpId::Fused)
      v = v->parentRegion()->parentNode()->operands[static_cast<size_t>(v->index())];
    return v;
  };
  for (const auto& n : r.nodes()) {
    if (n->op == ir::OpId::IndexSelect || n->op == ir::OpId::Gather) {
      const ir::Value* data = n->operands[0];
      int64_t d = n->attrs.find("dim")->i;
      if (d < 0) d += data->type.rank();
      out[outer(n->operands[1])] = data->type.shape[static_cast<size_t>(d)];
    }
    if (n->op == ir::OpId::ScatterNd && n->operands[1]->type.shape.back().isStatic(1))
      out[outer(n->operands[1])] = n->operands[0]->type.shape[0];
    for (const auto& region : n->regions()) indexedSizes(*region, out);
  }
}

/// Inputs for a graph: symbolic sizes 3, 4, ... in order met; a normal
/// sample per parameter (runtime::randomTensor), except that parameters
/// used as indices hold indices in range, negative ones included.
inline std::vector<runtime::Tensor> randomInputs(const ir::Graph& g, uint64_t seed) {
  std::map<const ir::Value*, ir::Dim> indexed;
  indexedSizes(g.body, indexed);
  ir::SymbolBindings sizes;
  std::vector<runtime::Tensor> inputs;
  for (const auto& p : g.body.params()) {
    for (const ir::Dim& d : p->type.shape)
      if (!d.isStatic()) sizes.emplace(d.symbol, 3 + static_cast<int64_t>(sizes.size()));
    ir::TensorType t = ir::substitute(p->type, sizes);
    runtime::Tensor x =
        runtime::randomTensor(t.dtype, runtime::concreteShape(t), seed + static_cast<uint64_t>(p->index()));
    if (auto it = indexed.find(p.get()); it != indexed.end()) {
      const int64_t size = it->second.isStatic() ? it->second.size : sizes.at(it->second.symbol);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t v = x.getInt(i) % (2 * size);  // in (-2 size, 2 size)
        x.setInt(i, v >= size ? v - 2 * size : v < -size ? v + 2 * size : v);
      }
    }
    inputs.push_back(std::move(x));
  }
  return inputs;
}

inline bool hasGemm(const ir::Region& r) {
  return ir::containsOp(r, ir::OpId::Matmul) || ir::containsOp(r, ir::OpId::Linear);
}

}  // namespace graphc::testing
