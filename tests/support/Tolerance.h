// When two numbers are close enough, for every test and test tool: one
// rule (numpy's allclose: |got - want| <= atol + rtol * |want|, NaN equal
// to NaN, an infinity only to itself) and one table of tolerances per
// dtype (torch.testing's defaults). Tests that must allow more widen these
// and say why.
#pragma once

#include <cmath>

#include "ir/DType.h"

namespace graphc::testing {

struct Tolerance {
  double rtol, atol;
};

/// torch.testing's defaults; exact for integers and bool.
inline Tolerance defaultTolerance(ir::DType t) {
  switch (t) {
    case ir::DType::F16: return {1e-3, 1e-5};
    case ir::DType::BF16: return {1.6e-2, 1e-5};
    case ir::DType::F32: return {1.3e-6, 1e-5};
    case ir::DType::F64: return {1e-7, 1e-7};
    default: return {0, 0};
  }
}

inline bool isClose(double got, double want, Tolerance tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

}  // namespace graphc::testing
