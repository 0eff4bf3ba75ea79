// Debug dumps, the TORCH_COMPILE_DEBUG analog. With GRAPHC_DEBUG_DIR=dir
// (or CompileOptions::dumpDir, or `graphc compile --dump-dir dir`) every
// compile writes a fresh folder dir/NNN_<graph>/ holding:
//
//   00_captured.graph         the graph as it came in (parsed or traced)
//   NN_after_<pass>.graph     the IR after each pass of the pipeline
//   kernels/<k>.kernel        each kernel in the kernel (loop) IR
//   kernels/<k>.ll            cpu: the kernel's LLVM IR before O3
//   module.cu                 cuda: the one CUDA C++ module of the graph
//   timing.txt                wall time of each pass and backend stage
//
// Every .graph file re-parses (the round-trip contract); the folder's name
// is made from the graph's name with anything but [A-Za-z0-9_-] replaced.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  /// NN_after_<pass>.graph, numbered in pipeline order; its time is the
  /// time since the previous stage.
  void afterPass(std::string_view pass, const ir::Module& m);
  /// Every kernel of `g` in the kernel IR, and its generated source for
  /// `device` ("cpu": LLVM IR per kernel, "cuda": the module's CUDA C++).
  void kernels(const ir::Graph& g, std::string_view device);
  /// Records a stage's wall time for timing.txt; a `detail` (one kernel of
  /// a stage that compiles them in parallel) is listed but not summed.
  void stage(std::string name, double seconds, bool detail = false);
  /// Writes timing.txt.
  void finish();

 private:
  explicit DebugDump(std::string path);
  std::string path_;
  int passIndex_ = 0;
  double lastStamp_ = 0;
  struct Stage {
    std::string name;
    double seconds;
    bool detail;
  };
  std::vector<Stage> stages_;
};

}  // namespace graphc
