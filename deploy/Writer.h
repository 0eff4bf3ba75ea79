// Writes an exported package (docs/export.md) of a graph the pass pipeline
// made, with the compiled code its backend produced: graph.graph (the text,
// weights referenced by name), graph.json (what the runtime reads),
// plan.json (the step plan and the kernel table), weights.safetensors and
// the backend's files, under a manifest with versions, the target and a
// checksum per entry. The compiler's half of deploy/: it prints IR, so the
// compiler-free runtime does not link it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "codegen/Backend.h"
#include "ir/Graph.h"
#include "ir/Mx.h"

namespace graphc::deploy {

/// What `weights` names: nullopt for "f32", else the format; throws
/// ir::Error for a name that is neither.
std::optional<ir::MxFormat> weightStorage(const std::string& weights);

/// Writes the package of `fused` for `backend`'s device, its code made by
/// backend.exportCode. `weights`: "f32" (every constant as it is), or
/// "f16", "bf16" or an MX format name (ir::parseMxFormat): then every f32
/// constant whose every reader the backend's kernels can read so
/// (Backend::readsMxInput: linear weights and matmul B matrices; on cpu also
/// convolution filters and large gathered tables) is stored in that format,
/// the rest as they are. Throws ir::Error for a
/// format it does not know, ir::LocatedError at a kernel the backend
/// cannot compile.
void writeGraphPackage(const ir::Graph& fused, const codegen::Backend& backend, const codegen::CompileOptions& options,
                       codegen::CompileReport& report, const std::filesystem::path& out, nlohmann::json manifest,
                       const std::string& weights = "f32");

}  // namespace graphc::deploy
