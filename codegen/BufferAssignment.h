// Buffer assignment: where each intermediate buffer of a fused graph's top
// level (a result that is neither a graph input, an output nor a constant)
// lives in one arena. An analysis the backends run on the graph the pass
// pipeline made (as XLA's BufferAssigner runs in its backend), keyed by the
// values themselves; nothing is stored on the IR.
//
//  - a buffer is live from the node that defines it to its last use;
//  - a pointwise kernel whose body is purely elementwise writes its result
//    in place of an input of the same type that dies there;
//  - the operands of a concatenation that needs no copy are written into
//    their slices of its buffer (ConcatViews.h): the values of one group
//    share one slot, live from the first one's definition to the last use
//    of any, and none is overwritten in place;
//  - otherwise the first freed slot big enough is reused, else the arena
//    grows;
//  - a result that updates an input in place (ir::InputUpdate) is computed
//    straight into the input's buffer when nothing reads the input after
//    the node that computes it (that node may read it elementwise, as an
//    in-place pointwise kernel does, or scatter into it: a KV cache's new
//    row) and the input is not also returned;
//    otherwise it is computed aside and copied in after every read.
//
// Sizes may be symbolic: a buffer's size is a coefficient times a product
// of symbols ("16*B*S"), and an offset is the sum of the sizes of the
// buffers laid out before it, each rounded up to kArenaAlignment bytes
// when the symbols are bound — so every buffer starts aligned for any dtype
// (and on a cache line) without rounding a symbolic size's coefficient up.
// "Big enough" must hold for every value of the symbols.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/Graph.h"

namespace graphc::codegen {

constexpr int64_t kArenaAlignment = 64;

/// One buffer's byte count: coefficient × Π symbols (sorted; a symbol may
/// repeat, as in B*B).
struct Bytes {
  int64_t coefficient = 0;
  std::vector<std::string> symbols;

  /// The byte count of a tensor type (the verifier has checked that its
  /// static part fits int64).
  static Bytes of(const ir::TensorType& t);
  /// Whether a buffer of this size fits in a slot of `capacity` for every
  /// value of the symbols.
  bool fitsIn(const Bytes& capacity) const;
  /// The byte count for these values of the symbols (each must be bound);
  /// throws ir::Error if it overflows int64.
  int64_t evaluate(const ir::SymbolBindings& sizes) const;
  std::string str() const;
  bool operator==(const Bytes&) const = default;
};

/// A position in the arena: Σ alignUp(piece, kArenaAlignment).
struct ArenaOffset {
  std::vector<Bytes> pieces;

  ArenaOffset operator+(const Bytes& size) const;
  /// Throws ir::Error if the sum overflows int64.
  int64_t evaluate(const ir::SymbolBindings& sizes) const;
  /// "128*B + 64", with `align64(16*B)` for a piece whose rounding depends
  /// on the symbols.
  std::string str() const;
};

struct BufferAssignment {
  struct Buffer {
    const ir::Value* value = nullptr;
    ArenaOffset offset;
    Bytes size;
    int firstStep = 0, lastStep = 0;        // positions of the defining node and the last use
    const ir::Value* reusedFrom = nullptr;  // the value whose slot this one took over in place
    bool concatView = false;                // a concatenation in place: its operands' bytes
    const ir::Value* concatInto = nullptr;  // an operand written into this concatenation's bytes
  };
  const ir::Graph* graph = nullptr;
  std::vector<Buffer> buffers;  // in program order
  ArenaOffset arenaSize;
  /// The concatenations whose result is a view of their operands: no step
  /// computes them.
  std::unordered_set<const ir::Node*> concatViews;
  /// Each input updated in place, in result order.
  struct Update {
    size_t result = 0;
    const ir::Value* param = nullptr;
    const ir::Value* value = nullptr;  // what the graph returns for it
    enum class How {
      Unchanged,  // the value is the parameter itself: nothing to do
      Direct,     // its node writes the parameter's buffer
      Copy,       // copied in after the last read (and after the outputs' copies)
    } how = How::Copy;
  };
  std::vector<Update> updates;

  /// The parameter whose buffer `v` is computed into, or null.
  const ir::Value* writtenInto(const ir::Value* v) const;

  /// The buffer of `v`; null for a value that is not in the arena.
  const Buffer* find(const ir::Value* v) const;
};

/// Whether `n` is a pointwise kernel whose body is purely elementwise:
/// output element i reads element i of each input of the output's type, so
/// it may overwrite such an input.
bool isElementwiseKernel(const ir::Node& n);

/// Whether `n` is a scatter_nd into `data` that reads it only as the data
/// it scatters into: with its result in `data`'s buffer, the step stores
/// the updates and leaves every other element where it is.
bool scattersInPlace(const ir::Node& n, const ir::Value* data);

/// Assigns the buffers of `g`'s top level.
BufferAssignment assignBuffers(const ir::Graph& g);

/// The assignment as `//` comments after the graph's text (values named as
/// the printer names them): one line per buffer and the arena's size.
std::string describe(const BufferAssignment& a);

}  // namespace graphc::codegen
