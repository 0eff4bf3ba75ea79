// The golden cases (tests/golden/cases: a .graph per op × dtype with
// inputs and PyTorch's outputs as .npy) and what comparing eigh needs.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/Tensor.h"

namespace graphc::testing {

namespace fs = std::filesystem;

inline const fs::path kGoldenCases = fs::path(GRAPHC_SOURCE_DIR) / "tests/golden/cases";

inline std::vector<std::string> goldenCaseNames() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kGoldenCases))
    if (entry.path().extension() == ".graph") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Flips each eigenvector column of `v` to the sign of the expected one.
inline runtime::Tensor alignColumns(const runtime::Tensor& v, const runtime::Tensor& expected) {
  runtime::Tensor copy(v.dtype(), v.shape());
  const int64_t n = v.shape().back();
  for (int64_t b = 0; b < v.numel() / (n * n); ++b)
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t i = 0; i < n; ++i) dot += v.getDouble((b * n + i) * n + j) * expected.getDouble((b * n + i) * n + j);
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = (b * n + i) * n + j;
        copy.setDouble(k, dot < 0 ? -v.getDouble(k) : v.getDouble(k));
      }
    }
  return copy;
}

}  // namespace graphc::testing
