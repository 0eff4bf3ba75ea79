// Tensor types: a dtype and a shape whose dims are integers or symbolic
// sizes: NAMEs bound by the graph's inputs at run time, products of them
// with a constant factor (`4*B`, `B*S`), which is what reshaping a dynamic
// batch makes, and sums (`(P+1)`, `2*(S-1)`), which is what a KV cache
// grown by a token or a slice of a symbolic dim makes — torch's SymInt
// arithmetic without division.
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
/// times one or more symbols (`B`, `4*B`, `B*S`), or times one sum in
/// parentheses (`(P+1)`, `2*(S-1)`, `(B*S+P)`: integer multiples of
/// products of symbols, sorted, the constant last, their common factor
/// taken out), kept in one canonical form so that equal sizes compare
/// equal. Every Dim is made through the functions below, which keep it so.
struct Dim {
  int64_t size = 0;    // static: the size; symbolic: the constant factor (≥ 1)
  std::string symbol;  // the symbols, sorted and joined by '*' ("B*S"), or one sum ("(P+1)"); empty when static

  static Dim of(int64_t n) { return Dim{n, {}}; }
  static Dim sym(std::string name) { return Dim{1, std::move(name)}; }
  /// factor · Π symbols, in canonical form (static when there are none).
  static Dim product(int64_t factor, std::vector<std::string> symbols);
  bool isStatic() const { return symbol.empty(); }
  bool isStatic(int64_t n) const { return symbol.empty() && size == n; }
  /// Whether the dim is one symbol alone (`B`, not `2*B`, `B*S` or `(P+1)`).
  bool isSymbol() const { return !symbol.empty() && size == 1 && symbol.find_first_of("*(") == std::string::npos; }
  /// The factors of a symbolic dim: its symbols, sorted, with repeats
  /// (`B*B`), or its one sum (`(P+1)`). factorValue gives each one's value.
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

/// a · b; nullopt when a coefficient overflows.
std::optional<Dim> multiply(const Dim& a, const Dim& b);
/// a / b when it is exact (every term of a a multiple of b's one term, or a
/// an integer multiple of b).
std::optional<Dim> divide(const Dim& a, const Dim& b);
/// a + b and a - b; nullopt when a coefficient overflows or the result is
/// negative whatever the symbols' values (a size cannot be).
std::optional<Dim> add(const Dim& a, const Dim& b);
std::optional<Dim> subtract(const Dim& a, const Dim& b);
/// The value of one factor (a symbol, or a sum such as `(P+1)`) once its
/// symbols are bound; nullopt when one is not, the value overflows, or it
/// is negative.
std::optional<int64_t> factorValue(std::string_view factor, const SymbolBindings& bindings);
/// The symbols a dim's value depends on, sorted, without repeats (`(B*S+P)`:
/// B, P, S): what must be bound for it to have one.
std::vector<std::string> symbolsOf(const Dim& d);
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
