// A dense, C-ordered host tensor with shared storage. Elements are stored in
// their own dtype (f16 and bf16 as 16-bit patterns, bool as one byte).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/Type.h"

namespace graphc::runtime {

using ir::DType;

class Tensor {
 public:
  Tensor() = default;
  /// A zero-filled tensor; throws ir::Error if the size overflows.
  Tensor(DType dtype, std::vector<int64_t> shape);
  /// A tensor whose elements are not initialised, for a result every
  /// element of which is about to be written (an Executable's outputs):
  /// no pass over its memory before the kernels' own. Large ones reuse
  /// blocks freed earlier (HostBufferCache.h).
  static Tensor uninitialized(DType dtype, std::vector<int64_t> shape);
  /// A tensor over memory it does not own (an arena slice, a caller's
  /// buffer): no copy; `owner`, if given, is kept alive with it.
  static Tensor wrap(DType dtype, std::vector<int64_t> shape, std::byte* data, std::shared_ptr<void> owner = {});

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_ * ir::dtypeSize(dtype_)); }
  ir::TensorType type() const { return {dtype_, ir::staticShape(shape_)}; }

  /// What keeps the data alive, for views that outlive this handle (a
  /// dense constant made from the tensor).
  std::shared_ptr<const void> storageOwner() const { return storage_; }

  std::byte* data() { return storage_.get(); }
  const std::byte* data() const { return storage_.get(); }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(storage_.get());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(storage_.get());
  }

  /// Element `i` (C order) as a double / int64, whatever the dtype.
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  /// Stores `v` rounded (floats) or converted (ints: truncated toward zero,
  /// saturating; NaN becomes 0) to the dtype.
  void setDouble(int64_t i, double v);
  /// Stores `v` wrapped to the dtype's width (two's complement); bool: v != 0.
  void setInt(int64_t i, int64_t v);

  /// Same storage, new shape of the same element count.
  Tensor reshaped(std::vector<int64_t> shape) const;
  /// Fills every byte with `byte` (tests poison outputs this way).
  void fillBytes(uint8_t byte);

 private:
  /// Checks the size and allocates storage_ for dtype_ and shape_.
  void allocate(bool zeroed);

  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::shared_ptr<std::byte[]> storage_;
};

/// Row-major strides (in elements) of a shape.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape);
/// Product of sizes / byte count of a tensor (ir/SizeMath.h); throw
/// ir::Error on a negative size or overflow.
int64_t checkedNumel(const std::vector<int64_t>& shape);
int64_t checkedBytes(DType dtype, const std::vector<int64_t>& shape);
std::vector<int64_t> concreteShape(const ir::TensorType& t);

}  // namespace graphc::runtime
