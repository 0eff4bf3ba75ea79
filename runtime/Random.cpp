#include "runtime/Random.h"

#include <cmath>
#include <random>

namespace graphc::runtime {

Tensor randomTensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed) {
  Tensor t(dtype, shape);
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = normal(engine);
    if (dtype == DType::Bool)
      t.setInt(i, x > 0);
    else if (ir::isInteger(dtype))
      t.setInt(i, static_cast<int64_t>(std::lround(4 * x)));
    else
      t.setDouble(i, x);
  }
  return t;
}

}  // namespace graphc::runtime
