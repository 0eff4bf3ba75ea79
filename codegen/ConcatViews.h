// Concatenations in place: which concatenations of a graph's top level need
// no copy, because each operand's producer writes straight into the
// operand's slice of the result's buffer (as Inductor realises cat inputs
// into views of its output, and TensorRT and OpenVINO elide concats). An
// analysis for the buffer assignment; nothing is stored on the IR.
//
// A concatenation (a bare `concat`, or a fused kernel whose body is only a
// concat of its parameters in order, as fuse makes them) is a view when
//  - its slices are contiguous: every dim before the concatenated one has
//    size 1 (channels at batch 1, an image's rows);
//  - its types are static and every operand's slice starts on a multiple of
//    kArenaAlignment bytes (the kernels' buffers all start aligned);
//  - its result and operands are arena buffers: computed by a top-level
//    node, not a parameter, a constant or a returned value, whose buffers
//    are the caller's or the graph's;
//  - its operands are distinct values, and each can sit where the
//    concatenation needs it: an operand another view placed already must be
//    at the matching offset, and no two values computed by a step (roots:
//    every member that is not itself a view) may share a byte.
// Views chain: the concatenations of a growing list (DenseNet's, each a
// prefix of the next) become one group of bytes, each feature map written
// once. A concatenation that does not qualify stays a copy.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/Graph.h"

namespace graphc::codegen {

struct ConcatViews {
  struct Member {
    const ir::Value* value = nullptr;
    int64_t offset = 0;               // bytes from the group's start
    bool view = false;                // a concatenation's result (no step computes it)
    const ir::Value* into = nullptr;  // a root: the view that placed it
  };
  /// Values sharing one buffer, each at its offset in it.
  struct Group {
    std::vector<Member> members;
    int64_t bytes = 0;
  };
  std::vector<Group> groups;
  /// Each member's group and position in it.
  std::unordered_map<const ir::Value*, std::pair<size_t, size_t>> memberOf;
  /// The concatenations that run no step.
  std::unordered_set<const ir::Node*> nodes;
};

/// Whether `n` is only a concatenation of its operands in order: a bare
/// concat, or a fused kernel whose body is one.
bool isConcatCopy(const ir::Node& n);

/// The concatenations of `body` (a graph's top level) that are views.
ConcatViews findConcatViews(const ir::Region& body);

}  // namespace graphc::codegen
