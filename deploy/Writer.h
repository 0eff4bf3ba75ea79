// Writes an exported package (docs/export.md) of a graph the pass pipeline
// made, with the compiled code its backend produced: graph.graph (the text,
// weights referenced by name), graph.json (what the runtime reads),
// plan.json (the step plan and the kernel table), weights.safetensors and
// the backend's files, under a manifest with versions, the target and a
// checksum per entry. The compiler's half of deploy/: it prints IR, so the
// compiler-free runtime does not link it.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "codegen/Backend.h"
#include "ir/Graph.h"

namespace graphc::deploy {

void writeCpuPackage(const ir::Graph& fused, const codegen::Backend::ExportedCode& code,
                     const std::filesystem::path& out, nlohmann::json manifest);

}  // namespace graphc::deploy
