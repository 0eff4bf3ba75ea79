// The index-expression constructors and the rules they simplify with.
#include "codegen/kernel/Index.h"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "codegen/kernel/KernelIR.h"

namespace graphc::codegen::kernel {

using namespace ir;

// ---- index expressions ---------------------------------------------------------

IndexPtr Index::constant(int64_t v) {
  auto e = std::make_shared<Index>();
  e->kind = Kind::Const;
  e->value = v;
  return e;
}

IndexPtr Index::var(int64_t v, int64_t extent) {
  auto e = std::make_shared<Index>();
  e->kind = Kind::Var;
  e->value = v;
  e->extent = extent;
  return e;
}

IndexPtr Index::dim(const Dim& d) {
  IndexPtr e = constant(d.size);  // a symbolic dim: its factor times each symbol
  for (const std::string& f : d.factors()) {
    auto s = std::make_shared<Index>();
    s->kind = Kind::Sym;
    s->symbol = f;
    e = mul(e, s);
  }
  return e;
}

Indices vars(size_t count, size_t first) {
  Indices out;
  for (size_t k = 0; k < count; ++k) out.push_back(Index::var(static_cast<int64_t>(first + k)));
  return out;
}

IndexPtr Index::indirect(std::shared_ptr<const Expr> load, const Dim& size) {
  auto e = std::make_shared<Index>();
  e->kind = Kind::Indirect;
  e->load = std::move(load);
  e->rhs = dim(size);
  return e;
}

namespace {
bool isConst(const IndexPtr& e, int64_t v) { return e->kind == Index::Kind::Const && e->value == v; }

IndexPtr binary(Index::Kind kind, IndexPtr a, IndexPtr b) {
  auto e = std::make_shared<Index>();
  e->kind = kind;
  e->lhs = std::move(a);
  e->rhs = std::move(b);
  return e;
}

/// Structural equality (indices are small once simplified).
bool same(const IndexPtr& a, const IndexPtr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->value != b->value || a->symbol != b->symbol || a->load != b->load)
    return false;
  return same(a->lhs, b->lhs) && same(a->rhs, b->rhs);
}

/// An index of the form (x / p) % m with constants p and m (p = 1: no
/// division; m = 0: no remainder): one "digit" of x in a mixed radix, what
/// unravelling a linear index over a shape makes.
struct Digit {
  IndexPtr x;
  int64_t p = 1, m = 0;
};

Digit digitOf(const IndexPtr& e) {
  Digit d{e};
  if (d.x->kind == Index::Kind::Mod && d.x->rhs->kind == Index::Kind::Const) {
    d.m = d.x->rhs->value;
    d.x = d.x->lhs;
  }
  if (d.x->kind == Index::Kind::Div && d.x->rhs->kind == Index::Kind::Const) {
    d.p = d.x->rhs->value;
    d.x = d.x->lhs;
  }
  return d;
}

/// The largest value `e` can take, where its form says (a remainder, a
/// constant and what is built from them); nullopt where it does not.
std::optional<int64_t> maxOf(const IndexPtr& e) {
  switch (e->kind) {
    case Index::Kind::Const: return e->value;
    case Index::Kind::Var:
      if (e->extent > 0) return e->extent - 1;
      return std::nullopt;
    case Index::Kind::Mod:
      if (e->rhs->kind == Index::Kind::Const) return e->rhs->value - 1;
      return std::nullopt;
    case Index::Kind::Add: {
      auto a = maxOf(e->lhs), b = maxOf(e->rhs);
      int64_t sum = 0;  // b may be negative (a padded window's offset)
      if (a && b && !__builtin_add_overflow(*a, *b, &sum)) return sum;
      return std::nullopt;
    }
    case Index::Kind::Mul: {  // of non-negative factors (a negative constant: unknown)
      auto a = maxOf(e->lhs), b = maxOf(e->rhs);
      if (a && b && *a >= 0 && *b >= 0 && (*b == 0 || *a <= INT64_MAX / *b)) return *a * *b;
      return std::nullopt;
    }
    case Index::Kind::Clamp: {
      auto size = maxOf(e->rhs);
      if (size) return *size - 1;
      return std::nullopt;
    }
    case Index::Kind::Div: {
      auto a = maxOf(e->lhs);
      if (a && e->rhs->kind == Index::Kind::Const && e->rhs->value > 0) return *a / e->rhs->value;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

/// An index of the form a·c + b with a constant c > 0: what ravelling a
/// pair of digits makes.
struct Scaled {
  IndexPtr a;
  int64_t c = 0;
  IndexPtr b;
  /// Whether 0 ≤ b < c, so that b is the low digit.
  bool lowBelowC() const {
    auto bMax = maxOf(b);
    return bMax && *bMax < c;
  }
};

std::optional<Scaled> scaledOf(const IndexPtr& e) {
  if (e->kind != Index::Kind::Add || e->lhs->kind != Index::Kind::Mul || e->lhs->rhs->kind != Index::Kind::Const ||
      e->lhs->rhs->value <= 0)
    return std::nullopt;
  return Scaled{e->lhs->lhs, e->lhs->rhs->value, e->rhs};
}

IndexPtr fromDigit(const Digit& d) {
  IndexPtr e = d.x;
  if (d.p != 1) e = div(e, Index::constant(d.p));
  if (d.m != 0) e = mod(e, Index::constant(d.m));
  return e;
}

}  // namespace

// The constructors fold the identities that index maps produce constantly.
// Every index is non-negative (loop variables, sizes, clamped indirect
// indices), so integer division is floor division and these hold:
//   (x / a) / b = x / (a·b)
//   (x % m) / c = (x / c) % (m / c)         when c divides m
//   (x % m) % c = x % c                     when c divides m
//   ((x/p/c) % M)·c + (x/p) % c = (x/p) % (M·c)   (no "% M": = x/p)
//   (a·c + b) / (c·k) = a / k,  (a·c + b) % (c·k) = (a % k)·c + b
//                                            when 0 ≤ b < c
//   (a·c + b) / d = a·(c/d) + b / d,  (a·c + b) % d = b % d
//                                            when d divides c
// The last merges two adjacent digits, so that ravelling what unravel made
// gives back the linear index: a chain of reshapes (a Tile, say) stays a
// short expression instead of one that grows with each reshape.
IndexPtr add(IndexPtr a, IndexPtr b) {
  if (isConst(a, 0)) return b;
  if (isConst(b, 0)) return a;
  int64_t folded = 0;  // folded unless it overflows (then left to the emitters' 64-bit arithmetic)
  if (a->kind == Index::Kind::Const && b->kind == Index::Kind::Const &&
      !__builtin_add_overflow(a->value, b->value, &folded))
    return Index::constant(folded);
  if (a->kind == Index::Kind::Mul && a->rhs->kind == Index::Kind::Const) {
    const int64_t c = a->rhs->value;
    const Digit high = digitOf(a->lhs), low = digitOf(b);
    if (low.m == c && same(high.x, low.x) && low.p <= INT64_MAX / c && high.p == low.p * c &&
        (high.m == 0 || high.m <= INT64_MAX / c))
      return fromDigit(Digit{low.x, low.p, high.m == 0 ? 0 : high.m * c});
  }
  return binary(Index::Kind::Add, std::move(a), std::move(b));
}

IndexPtr mul(IndexPtr a, IndexPtr b) {
  if (isConst(a, 0) || isConst(b, 0)) return Index::constant(0);
  if (isConst(a, 1)) return b;
  if (isConst(b, 1)) return a;
  int64_t folded = 0;
  if (a->kind == Index::Kind::Const && b->kind == Index::Kind::Const &&
      !__builtin_mul_overflow(a->value, b->value, &folded))
    return Index::constant(folded);
  return binary(Index::Kind::Mul, std::move(a), std::move(b));
}

IndexPtr div(IndexPtr a, IndexPtr b) {
  if (isConst(b, 1) || isConst(a, 0)) return a;
  if (b->kind == Index::Kind::Const && b->value > 0) {
    const int64_t c = b->value;
    if (a->kind == Index::Kind::Div && a->rhs->kind == Index::Kind::Const && a->rhs->value <= INT64_MAX / c)
      return div(a->lhs, Index::constant(a->rhs->value * c));
    if (a->kind == Index::Kind::Mod && a->rhs->kind == Index::Kind::Const && a->rhs->value % c == 0)
      return mod(div(a->lhs, b), Index::constant(a->rhs->value / c));
    if (auto m = maxOf(a); m && *m < c) return Index::constant(0);
    if (auto s = scaledOf(a)) {
      if (c % s->c == 0 && s->lowBelowC()) return div(s->a, Index::constant(c / s->c));
      if (s->c % c == 0) return add(mul(s->a, Index::constant(s->c / c)), div(s->b, b));
    }
  }
  return binary(Index::Kind::Div, std::move(a), std::move(b));
}

IndexPtr mod(IndexPtr a, IndexPtr b) {
  if (isConst(b, 1)) return Index::constant(0);
  if (b->kind == Index::Kind::Const && b->value > 0) {
    const int64_t c = b->value;
    if (a->kind == Index::Kind::Mod && a->rhs->kind == Index::Kind::Const && a->rhs->value % c == 0)
      return mod(a->lhs, b);
    if (auto m = maxOf(a); m && *m < c) return a;  // already below c
    if (auto s = scaledOf(a)) {
      if (c % s->c == 0 && s->lowBelowC())
        return add(mul(mod(s->a, Index::constant(c / s->c)), Index::constant(s->c)), s->b);
      if (s->c % c == 0) return mod(s->b, b);
    }
  }
  return binary(Index::Kind::Mod, std::move(a), std::move(b));
}

IndexPtr clamp(IndexPtr a, IndexPtr size) {
  if (a->kind == Index::Kind::Const && size->kind == Index::Kind::Const)
    return Index::constant(std::clamp<int64_t>(a->value, 0, size->value - 1));
  // Non-negative by its form (no negative constant in it) and below the size.
  std::function<bool(const IndexPtr&)> nonNegative = [&](const IndexPtr& e) {
    switch (e->kind) {
      case Index::Kind::Const: return e->value >= 0;
      case Index::Kind::Var:
      case Index::Kind::Sym:
      case Index::Kind::Indirect:
      case Index::Kind::Clamp: return true;
      default: return nonNegative(e->lhs) && nonNegative(e->rhs);
    }
  };
  auto max = maxOf(a), bound = maxOf(size);
  if (size->kind == Index::Kind::Const && max && bound && *max < *bound && nonNegative(a)) return a;
  return binary(Index::Kind::Clamp, std::move(a), std::move(size));
}

namespace {
/// An operand of *, / or %: parenthesised unless atomic or already in parentheses.
std::string operand(const IndexPtr& e) {
  const bool atomic = e->kind == Index::Kind::Const || e->kind == Index::Kind::Var || e->kind == Index::Kind::Sym ||
                      e->kind == Index::Kind::Add;
  return atomic ? toString(e) : "(" + toString(e) + ")";
}
}  // namespace

std::string toString(const IndexPtr& e) {
  switch (e->kind) {
    case Index::Kind::Const: return std::to_string(e->value);
    case Index::Kind::Var: return fmt::format("i{}", e->value);
    case Index::Kind::Sym: return e->symbol;
    case Index::Kind::Add: return fmt::format("({} + {})", toString(e->lhs), toString(e->rhs));
    case Index::Kind::Mul: return fmt::format("{} * {}", operand(e->lhs), operand(e->rhs));
    case Index::Kind::Div: return fmt::format("{} / {}", operand(e->lhs), operand(e->rhs));
    case Index::Kind::Mod: return fmt::format("{} % {}", operand(e->lhs), operand(e->rhs));
    case Index::Kind::Indirect: return fmt::format("index({}, {})", inlineText(*e->load), toString(e->rhs));
    case Index::Kind::Clamp: return fmt::format("clamp({}, {})", toString(e->lhs), toString(e->rhs));
  }
  return "?";
}

bool readsVar(const IndexPtr& e, const std::function<bool(int64_t)>& pred) {
  if (e->kind == Index::Kind::Var) return pred(e->value);
  if (e->kind == Index::Kind::Indirect) {
    // The loaded value's own indices, through its whole expression.
    std::vector<const Expr*> stack{e->load.get()};
    while (!stack.empty()) {
      const Expr* x = stack.back();
      stack.pop_back();
      for (const IndexPtr& i : x->index)
        if (readsVar(i, pred)) return true;
      for (const ExprPtr& a : x->args) stack.push_back(a.get());
    }
  }
  return (e->lhs && readsVar(e->lhs, pred)) || (e->rhs && readsVar(e->rhs, pred));
}
}  // namespace graphc::codegen::kernel
