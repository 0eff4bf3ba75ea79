// Prints the IR as .graph text. The output always carries result types and
// re-parses to a graph that prints identically (the round-trip contract).
#pragma once

#include <string>
#include <unordered_map>

#include "ir/Graph.h"

namespace graphc::ir {

std::string print(const Module& m);
std::string print(const Graph& g);

/// The names the printer gives the values of one region (with '%').
std::unordered_map<const Value*, std::string> valueNames(const Region& r);

/// Whether `name` can be written after '%' or '@' as is.
bool isPlainIdentifier(std::string_view name);

}  // namespace graphc::ir
