// Prints the IR as .graph text. The output always carries result types and
// re-parses to a graph that prints identically (the round-trip contract).
#pragma once

#include <string>
#include <unordered_map>

#include "ir/Graph.h"

namespace graphc::ir {

std::string print(const Module& m, const AttributeTextOptions& options = {});
std::string print(const Graph& g, const AttributeTextOptions& options = {});

/// The text options of human-facing dumps (--print-ir-after*, debug dumps,
/// verifier failures): dense constants above 16 elements elided, unless the
/// user asked for the weights.
inline AttributeTextOptions dumpTextOptions(bool printWeights = false) { return {printWeights ? -1 : 16}; }

/// The names the printer gives the values of one region (with '%').
std::unordered_map<const Value*, std::string> valueNames(const Region& r);

/// Whether `name` can be written after '%' or '@' as is.
bool isPlainIdentifier(std::string_view name);

}  // namespace graphc::ir
