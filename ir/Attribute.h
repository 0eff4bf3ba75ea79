// Attribute values of .graph statements: `{dims = [0, 1], keepdim = true}`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/DType.h"
#include "ir/Mx.h"

namespace graphc::ir {

struct Attribute;

/// The elements of a dense constant (a model's weights): raw bytes in
/// row-major order, little-endian, bool one byte and f16/bf16 their two-byte
/// bit patterns. Held by pointer and shared, so copying the attribute (clone,
/// CSE, a pass rebuilding a node) and the tensors made from it never copy the
/// weights; `owner` keeps `data` alive (an imported tensor's storage, or a
/// buffer of the parser's).
struct DenseElements {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::shared_ptr<const void> owner;
  const std::byte* data = nullptr;
  size_t nbytes = 0;
  /// An f32 weight an exported package holds in an MX format (ir/Mx.h):
  /// then data is null and nbytes 0. Only the compiler-free runtime makes
  /// these, and only the cpu Executable's GEMMs read them (it refuses any
  /// other use).
  std::shared_ptr<const MxWeights> mx;

  int64_t numel() const;
  std::span<const std::byte> bytes() const { return {data, nbytes}; }
  /// Element `i` as a scalar attribute (Float, Int or Bool by dtype).
  Attribute element(int64_t i) const;
  /// Whether every element has the same bytes.
  bool isSplat() const;
};

/// One attribute value. A List holds nested values (small tensor literals
/// written by hand are nested lists of numbers); Dense holds a constant's
/// elements as raw bytes.
struct Attribute {
  enum class Kind : uint8_t { Int, Float, Bool, String, DType, Symbol, List, Dense };

  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  ir::DType dtype = ir::DType::F32;
  std::string s;  // String and Symbol
  std::vector<Attribute> list;
  std::shared_ptr<const DenseElements> dense;

  static Attribute ofInt(int64_t v);
  static Attribute ofFloat(double v);
  static Attribute ofBool(bool v);
  static Attribute ofString(std::string v);
  static Attribute ofDType(ir::DType t);
  static Attribute ofSymbol(std::string name);
  static Attribute ofList(std::vector<Attribute> items);
  static Attribute ofInts(const std::vector<int64_t>& v);
  /// Dense elements over `data`, which `owner` keeps alive; `nbytes` must be
  /// the shape's element count times the dtype's size (checked).
  static Attribute ofDense(DType dtype, std::vector<int64_t> shape, std::shared_ptr<const void> owner,
                           const std::byte* data, size_t nbytes);
  /// An f32 dense constant of `shape` held in an MX format.
  static Attribute ofMx(std::vector<int64_t> shape, std::shared_ptr<const MxWeights> mx);

  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  /// The value as a double (Int, Float and Bool).
  double asDouble() const;
  /// Dense attributes compare by content (dtype, shape and bytes).
  bool operator==(const Attribute& o) const;
};

/// A node's attributes, kept sorted by name so that printing and hashing
/// are deterministic.
class AttrMap {
 public:
  void set(const std::string& name, Attribute value);
  const Attribute* find(std::string_view name) const;
  bool erase(std::string_view name);
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  bool operator==(const AttrMap&) const = default;

 private:
  std::vector<std::pair<std::string, Attribute>> items_;
};

std::string kindName(Attribute::Kind k);

/// The first scalar of a (nested) list or dense value, the value itself for
/// a scalar: what a splat holds everywhere. Empty values have none (nullopt).
std::optional<Attribute> firstElement(const Attribute& a);

/// How attribute text is written. Dense constants print as
/// `dense<f32[2, 2], "0x0000803F...">` (the bytes in hex, as MLIR's
/// DenseElementsAttr); human-facing dumps elide those with more than
/// `elideDenseAbove` elements as `dense<f32[512, 512], __elided__>`, which
/// says what was there but does not parse back.
struct AttributeTextOptions {
  int64_t elideDenseAbove = -1;  // -1: never elide
  /// When set, every dense constant prints as a reference to where it is
  /// stored instead, `dense<f32[512, 512], weights["c3"]>` (an exported
  /// package's graph.graph; it does not parse back either).
  std::function<std::string(const DenseElements&)> denseReference;
};

/// Text form, parseable by the .graph parser unless a dense value was elided
/// (floats always carry a '.' or an exponent so they stay floats).
std::string toString(const Attribute& a, const AttributeTextOptions& options = {});

}  // namespace graphc::ir
