// The compiler-free runtime's entry: an exported package (docs/export.md)
// loaded into an Executable — no LLVM, no parser, no passes, no protobuf
// (libgraphc-runtime.so links none; a test checks it). Loading reads and
// checks the container (deploy/Package.h), checks the target against this
// machine, reads the weights (safetensors, used in place) and the graph
// (graph.json, verified), plans it and compares the plan and every
// kernel's IR with the package's (deploy/PlanJson.h), then dlopens the
// kernels' shared object from memory (memfd) and binds each kernel's
// symbol; a cuda package's module and cubins go to the runtime's cuda
// module (deploy/CudaPackages.h). Anything wrong is an ir::Error naming
// the package and what.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "codegen/Backend.h"
#include "ir/Graph.h"
#include "runtime/Executable.h"

namespace graphc::deploy {

struct LoadedPackage {
  nlohmann::json manifest;
  codegen::Device device = codegen::Device::Cpu;
  std::unique_ptr<ir::Module> module;               // the optimised graph
  std::unique_ptr<runtime::Executable> executable;  // refers to module's graph: destroy it first
};

LoadedPackage loadPackage(const std::filesystem::path& path);
/// The same from the package's bytes; `name` is what errors call it.
LoadedPackage loadPackage(std::span<const std::byte> bytes, const std::string& name);

/// An Executable owning its graph (what the C API hands out).
std::unique_ptr<runtime::Executable> openPackage(const std::filesystem::path& path);

}  // namespace graphc::deploy
