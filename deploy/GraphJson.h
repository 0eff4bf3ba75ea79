// A graph as JSON: how an exported package holds the optimised graph for a
// runtime that has no .graph parser. The form mirrors ir/Graph.h one to one:
//
//   graph  {"name": "main", "results": [type...], "body": region}
//   region {"label": "then", "params": [value...], "nodes": [node...],
//           "returns": [id...]}
//   node   {"op": "matmul", "operands": [id...], "attrs": {"name": attr},
//           "results": [value...], "regions": [region...]}
//   value  {"name": "x", "type": type}     type {"dtype": "f32", "shape": [2, "B", "4*B"]}
//   attr   {"int": 3} {"float": "0x1.8p+0"} {"bool": true} {"string": "..."}
//          {"dtype": "f32"} {"symbol": "B"} {"list": [attr...]} {"dense": ...}
//
// An id is a value's position in its region: the parameters, then each
// node's results in order (regions are isolated, so ids never cross them).
// Floats are C99 hex text, exact and able to say nan and inf. What a dense
// attribute holds is the caller's: the package writes the name of its
// tensor in the weights file. Reading checks every field's kind and every
// id, refuses nesting deeper than kMaxJsonNesting, and verifies the graph
// it built (ir/Verifier.h), so what comes back is a valid graph or an
// ir::Error — never a crash on a damaged or hostile file.
#pragma once

#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "ir/Graph.h"

namespace graphc::deploy {

constexpr int kMaxJsonNesting = 64;

using DenseToJson = std::function<nlohmann::json(const ir::DenseElements&)>;
using DenseFromJson = std::function<ir::Attribute(const nlohmann::json&)>;

nlohmann::json graphToJson(const ir::Graph& g, const DenseToJson& dense);

/// A module holding the one graph `j` describes, verified. Throws ir::Error.
std::unique_ptr<ir::Module> graphFromJson(const nlohmann::json& j, const DenseFromJson& dense);

}  // namespace graphc::deploy
