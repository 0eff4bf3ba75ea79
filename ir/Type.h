// Tensor types: a dtype and a shape whose dims are integers or symbolic
// sizes: NAMEs bound by the graph's inputs at run time, and products of
// them with a constant factor (`4*B`, `B*S`), which is what reshaping a
// dynamic batch makes — torch's SymInt products, without sums.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/DType.h"

namespace graphc::ir {

/// One dimension: a static size, or a symbolic one — a constant factor
/// times one or more symbols (`B`, `4*B`, `B*S`), kept in one canonical
/// form so that equal sizes compare equal.
struct Dim {
  int64_t size = 0;    // static: the size; symbolic: the constant factor (≥ 1)
  std::string symbol;  // the symbols, sorted and joined by '*' ("B*S"); empty when static

  static Dim of(int64_t n) { return Dim{n, {}}; }
  static Dim sym(std::string name) { return Dim{1, std::move(name)}; }
  /// factor · Π symbols, in canonical form (static when there are none).
  static Dim product(int64_t factor, std::vector<std::string> symbols);
  bool isStatic() const { return symbol.empty(); }
  bool isStatic(int64_t n) const { return symbol.empty() && size == n; }
  /// Whether the dim is one symbol alone (`B`, not `2*B` or `B*S`).
  bool isSymbol() const { return !symbol.empty() && size == 1 && symbol.find('*') == std::string::npos; }
  /// The symbols of a symbolic dim, sorted, with repeats (`B*B`).
  std::vector<std::string> factors() const;
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

/// a · b; nullopt when the constant factor overflows.
std::optional<Dim> multiply(const Dim& a, const Dim& b);
/// a / b when it is exact (b's symbols among a's, its factor dividing a's).
std::optional<Dim> divide(const Dim& a, const Dim& b);
/// The product of a shape's dims; nullopt when it overflows.
std::optional<Dim> numElements(const Shape& s);
/// The dim's value once its symbols are bound; nullopt when one is not, or
/// the value overflows.
std::optional<int64_t> evaluate(const Dim& d, const SymbolBindings& bindings);
/// A dim's text form (`4*B`) read back; nullopt when malformed.
std::optional<Dim> parseDim(std::string_view text);

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
