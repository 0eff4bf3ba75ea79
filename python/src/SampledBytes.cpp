// See SampledBytes.h.
#include "SampledBytes.h"

#include <cstring>

#include <fmt/format.h>

namespace graphc::python {

namespace {

uint64_t load(const std::byte* at, uint8_t width) {
  uint64_t v = 0;
  std::memcpy(&v, at, width);
  return v;
}

}  // namespace

SampledBytes::SampledBytes(const nb::sequence& arrays, int64_t perArray) {
  size_t k = 0;
  for (nb::handle object : arrays) {
    nb::ndarray<nb::ro> a;
    if (!nb::try_cast(object, a, /*convert=*/false) || a.device_type() != nb::device::cpu::value)
      throw nb::type_error(fmt::format("array {} is not a host array", k).c_str());
    ++k;
    const auto width = static_cast<uint8_t>((a.dtype().bits + 7) / 8);
    if (width == 0 || width > 8) throw nb::type_error("elements wider than 8 bytes");
    const auto n = static_cast<int64_t>(a.size());
    const int64_t count = std::min(n, perArray);
    const auto* base = static_cast<const std::byte*>(a.data());
    for (int64_t s = 0; s < count; ++s) {
      int64_t index = count == 1 ? 0 : s * (n - 1) / (count - 1);
      int64_t offset = 0;  // in elements, through the strides
      for (size_t d = a.ndim(); d-- > 0;) {
        const auto size = static_cast<int64_t>(a.shape(d));
        offset += index % size * a.stride(d);
        index /= size;
      }
      const std::byte* at = base + offset * width;
      where_.push_back(at);
      width_.push_back(width);
      value_.push_back(load(at, width));
    }
    keep_.push_back(std::move(a));
  }
}

bool SampledBytes::unchanged() const {
  for (size_t i = 0; i < where_.size(); ++i)
    if (load(where_[i], width_[i]) != value_[i]) return false;
  return true;
}

}  // namespace graphc::python
