#include "runtime/Tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "ir/Half.h"
#include "ir/SizeMath.h"
#include "runtime/HostBufferCache.h"

namespace graphc::runtime {
using ir::bf16ToFloat;
using ir::f16ToFloat;
using ir::floatToBf16;
using ir::floatToF16;

int64_t checkedNumel(const std::vector<int64_t>& shape) {
  if (std::optional<int64_t> n = ir::productOf(shape)) return *n;
  throw ir::Error(fmt::format("tensor of shape {} is too large", fmt::join(shape, "x")));
}

int64_t checkedBytes(DType dtype, const std::vector<int64_t>& shape) {
  if (std::optional<int64_t> n = ir::bytesOf(dtype, shape)) return *n;
  throw ir::Error(fmt::format("tensor of shape {} ({}) is too large: its byte count overflows int64",
                              fmt::join(shape, "x"), ir::dtypeName(dtype)));
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  allocate(/*zeroed=*/true);
}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.allocate(/*zeroed=*/false);
  return t;
}

void Tensor::allocate(bool zeroed) {
  const int64_t bytes = checkedBytes(dtype_, shape_);
  numel_ = checkedNumel(shape_);
  const auto size = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  try {
    storage_ = zeroed ? std::make_shared<std::byte[]>(size) : allocateHostStorage(size);
  } catch (const std::bad_alloc&) {
    throw ir::Error(fmt::format("out of memory allocating a {}[{}] tensor ({} bytes)", ir::dtypeName(dtype_),
                                fmt::join(shape_, ", "), bytes));
  }
}

Tensor Tensor::wrap(DType dtype, std::vector<int64_t> shape, std::byte* data, std::shared_ptr<void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  checkedBytes(t.dtype_, t.shape_);
  t.numel_ = checkedNumel(t.shape_);
  // Aliasing constructor: shares `owner`'s lifetime, points at `data`.
  t.storage_ = std::shared_ptr<std::byte[]>(std::move(owner), data);
  return t;
}

double Tensor::getDouble(int64_t i) const {
  switch (dtype_) {
    case DType::F16: return f16ToFloat(as<uint16_t>()[i]);
    case DType::BF16: return bf16ToFloat(as<uint16_t>()[i]);
    case DType::F32: return as<float>()[i];
    case DType::F64: return as<double>()[i];
    case DType::I8: return as<int8_t>()[i];
    case DType::I32: return as<int32_t>()[i];
    case DType::I64: return static_cast<double>(as<int64_t>()[i]);
    case DType::Bool: return as<uint8_t>()[i] ? 1.0 : 0.0;
  }
  return 0;
}

int64_t Tensor::getInt(int64_t i) const {
  switch (dtype_) {
    case DType::I8: return as<int8_t>()[i];
    case DType::I32: return as<int32_t>()[i];
    case DType::I64: return as<int64_t>()[i];
    case DType::Bool: return as<uint8_t>()[i] ? 1 : 0;
    default: {
      double v = getDouble(i);
      if (std::isnan(v)) return 0;
      if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
      if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(v);
    }
  }
}

namespace {
template <typename Int>
Int saturate(double v) {
  if (std::isnan(v)) return 0;
  // Compare in double against bounds that are exactly representable.
  const double lo = static_cast<double>(std::numeric_limits<Int>::min());
  const double hi = -lo;  // 2^(bits-1), one past the maximum
  if (v >= hi) return std::numeric_limits<Int>::max();
  if (v <= lo) return std::numeric_limits<Int>::min();
  return static_cast<Int>(v);
}
}  // namespace

void Tensor::setDouble(int64_t i, double v) {
  switch (dtype_) {
    case DType::F16: as<uint16_t>()[i] = floatToF16(static_cast<float>(v)); break;
    case DType::BF16: as<uint16_t>()[i] = floatToBf16(static_cast<float>(v)); break;
    case DType::F32: as<float>()[i] = static_cast<float>(v); break;
    case DType::F64: as<double>()[i] = v; break;
    case DType::I8: as<int8_t>()[i] = saturate<int8_t>(v); break;
    case DType::I32: as<int32_t>()[i] = saturate<int32_t>(v); break;
    case DType::I64: as<int64_t>()[i] = saturate<int64_t>(v); break;
    case DType::Bool: as<uint8_t>()[i] = v != 0 ? 1 : 0; break;
  }
}

void Tensor::setInt(int64_t i, int64_t v) {
  switch (dtype_) {
    case DType::I8: as<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::I32: as<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::I64: as<int64_t>()[i] = v; break;
    case DType::Bool: as<uint8_t>()[i] = v != 0 ? 1 : 0; break;
    default: setDouble(i, static_cast<double>(v));
  }
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  if (checkedNumel(t.shape_) != numel_) throw ir::Error("reshape changes the element count");
  return t;
}

void Tensor::fillBytes(uint8_t byte) { std::memset(storage_.get(), byte, nbytes()); }

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  // Only an empty tensor's strides can overflow (a 0 in its shape, huge
  // sizes beside it): no element is ever addressed, so 0 serves.
  for (size_t k = shape.size(); k-- > 1;)
    if (__builtin_mul_overflow(strides[k], shape[k], &strides[k - 1])) return std::vector<int64_t>(shape.size(), 0);
  return strides;
}

std::vector<int64_t> concreteShape(const ir::TensorType& t) {
  std::vector<int64_t> out;
  for (const ir::Dim& d : t.shape) {
    if (!d.isStatic()) throw ir::Error(fmt::format("symbolic size '{}' has no value", ir::toString(d)));
    out.push_back(d.size);
  }
  return out;
}

}  // namespace graphc::runtime
