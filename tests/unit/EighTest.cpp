// eigh on the reference interpreter, checked sign-invariantly as PyTorch's
// test_linalg does: ‖AV − VΛ‖, ‖VᵀV − I‖, ascending eigenvalues, and f32
// eigenvalues against the f64 ones, for batched 3×3 … 64×64.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "runtime/Interpreter.h"
#include "TestUtil.h"

namespace graphc {
namespace {

using ir::DType;
using runtime::Tensor;

struct EighCase {
  int64_t n;
  DType dtype;
  std::string uplo;
};

class Eigh : public ::testing::TestWithParam<EighCase> {};

std::vector<Tensor> runEigh(DType dtype, int64_t batch, int64_t n, const std::string& uplo, const Tensor& a) {
  auto m = testing::parseOk(fmt::format(
      "graph @g(%a: {0}[{1}, {2}, {2}]) -> ({0}[{1}, {2}], {0}[{1}, {2}, {2}]) {{\n"
      "  %w, %v = eigh(%a) {{uplo = \"{3}\"}}\n  return %w, %v\n}}\n",
      ir::dtypeName(dtype), batch, n, uplo));
  return runtime::interpret(*m->entry(), {a});
}

TEST_P(Eigh, ResidualsOrthogonalityAndOrder) {
  const auto [n, dtype, uplo] = GetParam();
  const int64_t batch = 5;
  std::mt19937 rng(static_cast<unsigned>(n * 7 + (dtype == DType::F32)));
  std::normal_distribution<double> normal;
  Tensor a(dtype, {batch, n, n});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        double v = normal(rng);
        a.setDouble((b * n + i) * n + j, v);
        a.setDouble((b * n + j) * n + i, v);
      }
  // Poison the triangle eigh must not read: results must not change.
  Tensor poisoned(dtype, {batch, n, n});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        bool read = uplo == "L" ? j <= i : j >= i;
        poisoned.setDouble((b * n + i) * n + j, read ? a.getDouble((b * n + i) * n + j) : 1e6);
      }
  auto out = runEigh(dtype, batch, n, uplo, poisoned);
  const Tensor& w = out[0];
  const Tensor& v = out[1];
  const double eps = dtype == DType::F32 ? 1.2e-7 : 2.3e-16;
  const double tol = 50 * eps * static_cast<double>(n);

  Tensor a64(DType::F64, {batch, n, n});
  for (int64_t i = 0; i < a.numel(); ++i) a64.setDouble(i, a.getDouble(i));
  auto ref = runEigh(DType::F64, batch, n, "L", a64);

  for (int64_t b = 0; b < batch; ++b) {
    auto A = [&](int64_t i, int64_t j) { return a.getDouble((b * n + i) * n + j); };
    auto V = [&](int64_t i, int64_t j) { return v.getDouble((b * n + i) * n + j); };
    auto W = [&](int64_t i) { return w.getDouble(b * n + i); };
    double normA = 0, residual = 0, ortho = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        normA += A(i, j) * A(i, j);
        double av = 0, vtv = 0;
        for (int64_t k = 0; k < n; ++k) {
          av += A(i, k) * V(k, j);
          vtv += V(k, i) * V(k, j);
        }
        residual += std::pow(av - V(i, j) * W(j), 2);
        ortho += std::pow(vtv - (i == j ? 1.0 : 0.0), 2);
      }
    EXPECT_LE(std::sqrt(residual / normA), tol) << "batch " << b;
    EXPECT_LE(std::sqrt(ortho), tol) << "batch " << b;
    double maxAbs = 0;
    for (int64_t i = 0; i < n; ++i) maxAbs = std::max(maxAbs, std::fabs(ref[0].getDouble(b * n + i)));
    for (int64_t i = 0; i < n; ++i) {
      if (i) {
        EXPECT_LE(W(i - 1), W(i)) << "eigenvalues must ascend";
      }
      EXPECT_NEAR(W(i), ref[0].getDouble(b * n + i), tol * maxAbs) << "eigenvalue " << i << " vs f64";
    }
  }
}

std::vector<EighCase> eighCases() {
  std::vector<EighCase> cases;
  for (int64_t n : {3, 4, 8, 17, 32, 64})
    for (DType t : {DType::F32, DType::F64})
      for (const char* uplo : {"L", "U"}) cases.push_back({n, t, uplo});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Batched, Eigh, ::testing::ValuesIn(eighCases()), [](const auto& info) {
  return fmt::format("n{}_{}_{}", info.param.n, ir::dtypeName(info.param.dtype), info.param.uplo);
});

TEST(EighEdge, EmptyBatchAndOneByOne) {
  Tensor empty(DType::F64, {0, 3, 3});
  EXPECT_EQ(runEigh(DType::F64, 0, 3, "L", empty)[0].numel(), 0);
  Tensor one = testing::tensorOf(DType::F32, {1, 1, 1}, {-2.5});
  auto out = runEigh(DType::F32, 1, 1, "L", one);
  EXPECT_EQ(out[0].getDouble(0), -2.5);
  EXPECT_EQ(std::fabs(out[1].getDouble(0)), 1.0);
}

}  // namespace
}  // namespace graphc
