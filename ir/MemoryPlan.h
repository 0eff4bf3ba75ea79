// The memory plan of a graph (computed by the memory-plan pass): where each
// intermediate buffer lives in one arena. Sizes may be symbolic: a buffer's
// size is a coefficient times a product of symbols ("16*B*S"), and an
// offset is the sum of the sizes of the buffers laid out before it, each
// rounded up to kArenaAlignment bytes when the symbols are bound — so every
// buffer starts aligned for any dtype (and on a cache line) without
// rounding a symbolic size's coefficient up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Type.h"

namespace graphc::ir {

constexpr int64_t kArenaAlignment = 64;

/// One buffer's byte count: coefficient × Π symbols (sorted; a symbol may
/// repeat, as in B*B).
struct Bytes {
  int64_t coefficient = 0;
  std::vector<std::string> symbols;

  /// The byte count of a tensor type (the verifier has checked that its
  /// static part fits int64).
  static Bytes of(const TensorType& t);
  /// Whether a buffer of this size fits in a slot of `capacity` for every
  /// value of the symbols.
  bool fitsIn(const Bytes& capacity) const;
  /// The byte count for these values of the symbols (each must be bound);
  /// throws ir::Error if it overflows int64.
  int64_t evaluate(const SymbolBindings& sizes) const;
  std::string str() const;
  bool operator==(const Bytes&) const = default;
};

/// A position in the arena: Σ alignUp(piece, kArenaAlignment).
struct ArenaOffset {
  std::vector<Bytes> pieces;

  ArenaOffset operator+(const Bytes& size) const;
  /// Throws ir::Error if the sum overflows int64.
  int64_t evaluate(const SymbolBindings& sizes) const;
  /// "128*B + 64", with `align64(16*B)` for a piece whose rounding depends
  /// on the symbols.
  std::string str() const;
};

struct BufferAssignment {
  std::string value;  // the value's printed name
  ArenaOffset offset;
  Bytes size;
  int firstStep = 0, lastStep = 0;  // positions of the defining node and the last use
  std::string reusedFrom;           // the value whose slot this one took over in place, if any
};

struct MemoryPlan {
  std::vector<BufferAssignment> buffers;
  ArenaOffset peak;  // the arena size
};

/// The plan as `//` comments, one line per buffer and the peak.
std::string describe(const MemoryPlan& plan);

}  // namespace graphc::ir
