// Debug dumps, the TORCH_COMPILE_DEBUG analog. With GRAPHC_DEBUG_DIR=dir
// (or CompileOptions::dumpDir, or `graphc compile --dump-dir dir`) every
// compile writes a fresh folder dir/NNN_<graph>/ holding:
//
//   00_captured.graph         the graph as it came in (parsed or traced)
//   NN_after_<pass>.graph     the IR after each pass of the pipeline
//   kernels/<k>.kernel        each kernel in the kernel (loop) IR
//   buffers.txt               the buffer assignment of the fused graph
//   kernels/<k>.ll            cpu: the kernel's optimised LLVM IR
//   module.cu                 cuda: the one CUDA C++ module of the graph
//   timing.txt                the compile's stages (CompileReport::table)
//
// Every .graph file re-parses (the round-trip contract); the folder's name
// is made from the graph's name with anything but [A-Za-z0-9_-] replaced.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/Backend.h"
#include "ir/Graph.h"

namespace graphc {

class DebugDump {
 public:
  /// The folder to use: `dir`, else $GRAPHC_DEBUG_DIR, else "" (no dump).
  static std::string rootFor(const std::string& dir);
  /// Creates root/NNN_<graph>/ with the first free NNN; throws ir::Error if
  /// it cannot be created. Null for an empty root.
  static std::unique_ptr<DebugDump> open(const std::string& root, std::string_view graphName);

  const std::string& path() const { return path_; }

  /// Writes `text` to path()/relative (folders made as needed); throws
  /// ir::Error if it cannot.
  void write(std::string_view relative, std::string_view text);
  /// 00_captured.graph.
  void captured(const ir::Module& m);
  /// NN_after_<pass>.graph, numbered in pipeline order.
  void afterPass(std::string_view pass, const ir::Module& m);
  /// Every kernel of `g` in the kernel IR (kernels/<k>.kernel); the
  /// backend's own files go through write().
  void kernels(const ir::Graph& g, const codegen::kernel::LowerOptions& options);
  /// timing.txt: the compile's stages.
  void finish(const codegen::CompileReport& report);

 private:
  explicit DebugDump(std::string path);
  std::string path_;
  int passIndex_ = 0;
};

}  // namespace graphc
