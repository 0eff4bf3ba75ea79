// Index expressions of the kernel IR: integers over loop variables and
// symbolic sizes, built through constructors that simplify as they go (the
// rules are in Index.cpp), so that a chain of reshapes and broadcasts
// reads in0[i0 % 2, i1 % 3] rather than an expression that grows with
// every shape op.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/Type.h"

namespace graphc::codegen::kernel {

using ir::Dim;

struct Expr;

/// An integer index expression over loop variables and symbolic sizes.
/// Indirect: the integer value of `load` (an expression the kernel
/// computes, e.g. a load of an index tensor) taken into a dim of size
/// `rhs`: a negative value counts from the end, and the result is clamped
/// into [0, size) so that no index the kernel reads can leave its buffer
/// (the reference interpreter reports an out-of-range index instead).
/// Clamp: `lhs` clamped into [0, rhs) — a window's read in the padding
/// stays inside the buffer (an InBounds guard discards what it reads).
///
/// Every index is non-negative except where an InBounds guard or a Clamp
/// looks at it (a window position in the padding); div and mod are only
/// taken of non-negative ones.
struct Index {
  enum class Kind { Const, Var, Sym, Add, Mul, Div, Mod, Indirect, Clamp };
  Kind kind = Kind::Const;
  int64_t value = 0;   // Const; Var: the variable number
  int64_t extent = 0;  // Var: its loop's static size (0: not known), for simplification
  std::string symbol;  // Sym
  std::shared_ptr<const Index> lhs, rhs;
  std::shared_ptr<const Expr> load;  // Indirect

  static std::shared_ptr<const Index> constant(int64_t v);
  static std::shared_ptr<const Index> var(int64_t v, int64_t extent = 0);
  static std::shared_ptr<const Index> dim(const Dim& d);  // a size: constant or symbol
  static std::shared_ptr<const Index> indirect(std::shared_ptr<const Expr> load, const Dim& size);
};
using IndexPtr = std::shared_ptr<const Index>;

using Indices = std::vector<IndexPtr>;

/// Loop variables first, first + 1, ..., first + count - 1.
Indices vars(size_t count, size_t first = 0);

IndexPtr add(IndexPtr a, IndexPtr b);
IndexPtr mul(IndexPtr a, IndexPtr b);
IndexPtr div(IndexPtr a, IndexPtr b);
IndexPtr mod(IndexPtr a, IndexPtr b);
/// a clamped into [0, size): `a` itself where its form shows it is inside.
IndexPtr clamp(IndexPtr a, IndexPtr size);
std::string toString(const IndexPtr& e);

/// Whether `e` reads a loop variable for which `pred` holds, through an
/// indirect index's expression too.
bool readsVar(const IndexPtr& e, const std::function<bool(int64_t)>& pred);

/// What an indirect index resolves to for loaded value `v` in a dim of
/// `size` (negative from the end, then clamped into [0, size)).
inline int64_t wrapIndex(int64_t v, int64_t size) {
  if (v < 0) v += size;
  return v < 0 ? 0 : v >= size ? size - 1 : v;
}

}  // namespace graphc::codegen::kernel
