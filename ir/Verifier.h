// The verifier: the invariants every graph holds between passes.
//
//  - each node's operands are defined earlier in its own region (dominance
//    and region isolation), and its returns likewise;
//  - operand/result/region counts match the op table, attributes match
//    their schema, and each node's result types are what its type rule
//    gives (dtype, broadcasting, axes, matmul sizes, cond branches);
//  - every symbolic size is bound by a parameter of the graph, so the same
//    NAME is one size everywhere;
//  - a graph returns what its signature says; graph names are unique.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Graph.h"

namespace graphc::ir {

/// Reports each broken invariant to `diags`; returns true when none is.
bool verify(const Module& m, DiagnosticEngine& diags);
bool verify(const Graph& g, DiagnosticEngine& diags);

}  // namespace graphc::ir
