#include "frontend/api/DebugDump.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "codegen/BufferAssignment.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "ir/Printer.h"

namespace graphc {

namespace fs = std::filesystem;

namespace {

/// A file-name-safe form of an input identifier.
std::string safeName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 64)) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out += plain ? c : '_';
  }
  return out.empty() ? "graph" : out;
}
}  // namespace

std::string DebugDump::rootFor(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* env = std::getenv("GRAPHC_DEBUG_DIR");
  return env ? env : "";
}

std::unique_ptr<DebugDump> DebugDump::open(const std::string& root, std::string_view graphName) {
  if (root.empty()) return nullptr;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw ir::Error(fmt::format("{}: cannot create the dump directory: {}", root, ec.message()));
  // create_directory is false for a folder that exists, so concurrent
  // compiles (threads or processes) each get their own.
  for (int n = 0; n < 100000; ++n) {
    fs::path p = fs::path(root) / fmt::format("{:03}_{}", n, safeName(graphName));
    if (fs::create_directory(p, ec)) return std::unique_ptr<DebugDump>(new DebugDump(p.string()));
    if (ec) throw ir::Error(fmt::format("{}: cannot create the dump directory: {}", p.string(), ec.message()));
  }
  throw ir::Error(fmt::format("{}: no free dump folder name left", root));
}

DebugDump::DebugDump(std::string path) : path_(std::move(path)) {}

void DebugDump::write(std::string_view relative, std::string_view text) {
  fs::path p = fs::path(path_) / relative;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  std::ofstream out(p, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (ec || !out) throw ir::Error(fmt::format("{}: cannot write the dump file", p.string()));
}

void DebugDump::captured(const ir::Module& m) { write("00_captured.graph", ir::print(m, ir::dumpTextOptions())); }

void DebugDump::afterPass(std::string_view pass, const ir::Module& m) {
  write(fmt::format("{:02}_after_{}.graph", ++passIndex_, pass), ir::print(m, ir::dumpTextOptions()));
}

void DebugDump::kernels(const ir::Graph& g, const codegen::kernel::LowerOptions& options) {
  for (const ir::Node* n : codegen::kernel::fusedOps(g.body)) {
    codegen::kernel::Kernel k;
    try {
      k = codegen::kernel::lower(*n, options);
    } catch (const ir::LocatedError&) {
      throw;
    } catch (const ir::Error& e) {
      throw ir::LocatedError(n->loc, e.what());
    }
    write(fmt::format("kernels/{}.kernel", k.name), codegen::kernel::print(k));
  }
  write("buffers.txt", codegen::describe(codegen::assignBuffers(g)));
}

void DebugDump::finish(const codegen::CompileReport& report) { write("timing.txt", report.table()); }

}  // namespace graphc
