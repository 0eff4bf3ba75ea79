// Human-readable tensor text in NumPy's style, summarised past 1000 elements
// (the first and last three entries of each long dim).
#pragma once

#include <string>

#include "runtime/Tensor.h"

namespace graphc::runtime {

std::string formatTensor(const Tensor& t);

}  // namespace graphc::runtime
