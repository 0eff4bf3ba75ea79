// A cheap guard over arrays graphc copied when it compiled them in, as the
// torch.compile backend's frozen weights: elements sampled across each
// array when the guard is made, compared again on each call. It sees writes
// that bypass torch's version counter (through .data, a NumPy view) when
// they change a sampled element — a rewrite of a whole tensor (loading new
// weights, scaling them) almost surely does; a write to a few elements may
// not (docs/python.md says so, and how to pass weights on every call).
#pragma once

#include <cstdint>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace graphc::python {

namespace nb = nanobind;

class SampledBytes {
 public:
  /// Samples up to `perArray` elements of each array (all of a small one),
  /// evenly spread in index order; keeps each array's memory alive, so the
  /// samples stay readable whatever the caller does to its tensors.
  SampledBytes(const nb::sequence& arrays, int64_t perArray);

  /// Whether every sampled element still holds its value.
  bool unchanged() const;

  size_t size() const { return where_.size(); }

 private:
  std::vector<nb::ndarray<nb::ro>> keep_;
  std::vector<const std::byte*> where_;
  std::vector<uint8_t> width_;
  std::vector<uint64_t> value_;
};

}  // namespace graphc::python
