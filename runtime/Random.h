// Deterministic random inputs for `--input NAME=rand:SEED`: a normal sample
// from a seeded mt19937_64. Integer dtypes get the sample scaled by 4 and
// rounded; bool gets sample > 0.
#pragma once

#include <cstdint>

#include "runtime/Tensor.h"

namespace graphc::runtime {

Tensor randomTensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed);

}  // namespace graphc::runtime
