// Tensor types: a dtype and a shape whose dims are integers or symbolic
// sizes (NAMEs bound by the graph's inputs at run time).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/DType.h"

namespace graphc::ir {

/// One dimension: a static size, or a symbol such as `B`.
struct Dim {
  int64_t size = 0;    // meaningful when symbol is empty
  std::string symbol;  // non-empty for a symbolic size

  static Dim of(int64_t n) { return Dim{n, {}}; }
  static Dim sym(std::string name) { return Dim{0, std::move(name)}; }
  bool isStatic() const { return symbol.empty(); }
  bool isStatic(int64_t n) const { return symbol.empty() && size == n; }
  bool operator==(const Dim&) const = default;
};

using Shape = std::vector<Dim>;
/// Values of symbolic sizes, e.g. {"B": 32}.
using SymbolBindings = std::map<std::string, int64_t>;

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  bool isStatic() const;
  /// Number of elements when every dim is static (INT64_MAX if that overflows).
  std::optional<int64_t> staticNumElements() const;
  bool operator==(const TensorType&) const = default;
};

std::string toString(const Dim& d);
std::string toString(const Shape& s);
/// `f32[B, 128]`, `bool[]`.
std::string toString(const TensorType& t);
/// `f32[4], i64[]`: a comma-separated list, without parentheses.
std::string toString(const std::vector<TensorType>& types);

/// Replaces every bound symbol in `t` by its value; unbound symbols stay.
TensorType substitute(const TensorType& t, const SymbolBindings& bindings);

/// A concrete shape as static dims.
Shape staticShape(const std::vector<int64_t>& sizes);

}  // namespace graphc::ir
