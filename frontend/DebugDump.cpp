#include "frontend/DebugDump.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "ir/KernelIR.h"
#include "ir/Printer.h"
#ifdef GRAPHC_HAS_CPU
#include "codegen/cpu/Jit.h"
#endif
#ifdef GRAPHC_HAS_CUDA
#include "codegen/cuda/CudaExecutable.h"
#endif

namespace graphc {

namespace fs = std::filesystem;

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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

DebugDump::DebugDump(std::string path) : path_(std::move(path)), lastStamp_(now()) {}

void DebugDump::write(std::string_view relative, std::string_view text) {
  fs::path p = fs::path(path_) / relative;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  std::ofstream out(p, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (ec || !out) throw ir::Error(fmt::format("{}: cannot write the dump file", p.string()));
}

void DebugDump::captured(const ir::Module& m) {
  write("00_captured.graph", ir::print(m));
  lastStamp_ = now();
}

void DebugDump::afterPass(std::string_view pass, const ir::Module& m) {
  // The memory plan is not part of the text form; as `// ` comments it
  // leaves the file parseable.
  std::string text = ir::print(m);
  for (const auto& g : m.graphs)
    if (g->memoryPlan) text += ir::describe(*g->memoryPlan);
  write(fmt::format("{:02}_after_{}.graph", ++passIndex_, pass), text);
  double t = now();
  stages_.push_back({fmt::format("pass {}", pass), t - lastStamp_, false});
  lastStamp_ = t;
}

void DebugDump::kernels(const ir::Graph& g, std::string_view device) {
  std::vector<ir::kernel::Kernel> lowered;
  for (const ir::Node* n : ir::kernel::fusedOps(g.body)) lowered.push_back(ir::kernel::lower(*n));
  for (const auto& k : lowered) {
    write(fmt::format("kernels/{}.kernel", k.name), ir::kernel::print(k));
#ifdef GRAPHC_HAS_CPU
    if (device == "cpu") write(fmt::format("kernels/{}.ll", k.name), codegen::cpu::Jit::instance().emitLLVM(k));
#endif
  }
#ifdef GRAPHC_HAS_CUDA
  if (device == "cuda") write("module.cu", codegen::cuda::emitGraph(g).source);
#endif
  (void)device;
}

void DebugDump::stage(std::string name, double seconds, bool detail) {
  stages_.push_back({std::move(name), seconds, detail});
  lastStamp_ = now();
}

void DebugDump::finish() {
  std::string table = "// wall time of each compile stage\n";
  double total = 0;
  for (const Stage& s : stages_) {
    table += fmt::format("{:<40} {:>10.3f} ms\n", (s.detail ? "  " : "") + s.name, s.seconds * 1e3);
    if (!s.detail) total += s.seconds;
  }
  table += fmt::format("{:<40} {:>10.3f} ms\n", "total", total * 1e3);
  write("timing.txt", table);
}

}  // namespace graphc
