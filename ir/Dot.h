// Graphviz dot of a graph, for `graphc compile --emit=dot`: parameters and
// results as ellipses, ops as boxes, each edge labelled with its value's
// type. A fused kernel is a cluster named after the kernel (its kind
// below), holding its body's ops; a cond is a cluster with a diamond for
// the predicate, a cluster per branch and a point where the branches'
// results meet. Node ids are made here; names from the input appear only
// inside quoted, escaped labels.
#pragma once

#include <string>

#include "ir/Graph.h"

namespace graphc::ir {

std::string toDot(const Graph& g);

}  // namespace graphc::ir
