// eigh checked sign-invariantly as PyTorch's test_linalg does: ‖AV − VΛ‖,
// ‖VᵀV − I‖, ascending eigenvalues, and f32 eigenvalues against the f64
// reference, for batched 2×2 … 64×64, on the reference interpreter, on the
// cpu backend's two solvers (batched Jacobi, LAPACK in parallel) and on a
// graph compiled for the cpu backend (which picks a solver by n).
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/cpu/CpuExecutable.h"
#include "runtime/cpu/Eigh.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

using ir::DType;
using runtime::Tensor;

struct EighCase {
  int64_t n;
  DType dtype;
  std::string uplo;
  std::string solver;  // reference, jacobi, lapack, cpu (a compiled graph)
};

class Eigh : public ::testing::TestWithParam<EighCase> {};

std::vector<Tensor> runEigh(DType dtype, int64_t batch, int64_t n, const std::string& uplo, const Tensor& a,
                            const std::string& solver = "reference") {
  if (solver == "jacobi" || solver == "lapack") {
    Tensor w(dtype, {batch, n}), v(dtype, {batch, n, n});
    w.fillBytes(0xff);
    v.fillBytes(0xff);
    auto& pool = runtime::ThreadPool::global();
    if (solver == "jacobi")
      runtime::cpu::eighJacobi(a, uplo[0], w, v, pool);
    else
      runtime::cpu::eighLapack(a, uplo[0], w, v, pool);
    return {w, v};
  }
  auto m =
      testing::parseOk(fmt::format("graph @g(%a: {0}[{1}, {2}, {2}]) -> ({0}[{1}, {2}], {0}[{1}, {2}, {2}]) {{\n"
                                   "  %w, %v = eigh(%a) {{uplo = \"{3}\"}}\n  return %w, %v\n}}\n",
                                   ir::dtypeName(dtype), batch, n, uplo));
  if (solver == "cpu") return codegen::cpu::compileGraph(*m->entry())->run({a});
  return runtime::interpret(*m->entry(), {a});
}

TEST_P(Eigh, ResidualsOrthogonalityAndOrder) {
  const auto [n, dtype, uplo, solver] = GetParam();
  const int64_t batch = solver == "reference" ? 5 : 37;  // 37: Jacobi's groups of 16 (8) lanes, the last one partial
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
  auto out = runEigh(dtype, batch, n, uplo, poisoned, solver);
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
  auto add = [&](std::initializer_list<int64_t> sizes, const char* solver) {
    for (int64_t n : sizes)
      for (DType t : {DType::F32, DType::F64})
        for (const char* uplo : {"L", "U"}) cases.push_back({n, t, uplo, solver});
  };
  add({3, 4, 8, 17, 32, 64}, "reference");
  add({2, 3, 5, 8, 13, 16, 24}, "jacobi");
  add({3, 8, 25, 48}, "lapack");
  add({6, 24, 25, 40}, "cpu");  // both sides of the crossover
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Batched, Eigh, ::testing::ValuesIn(eighCases()), [](const auto& info) {
  return fmt::format("{}_n{}_{}_{}", info.param.solver, info.param.n, ir::dtypeName(info.param.dtype), info.param.uplo);
});

TEST(EighEdge, ANaNInputNamesTheBatchIndex) {
  const int64_t batch = 40, n = 4;
  Tensor a(DType::F32, {batch, n, n});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i) a.setDouble((b * n + i) * n + i, 1.0 + static_cast<double>(i));
  a.setDouble((21 * n + 2) * n + 1, NAN);  // matrix 21, lower triangle
  try {
    runEigh(DType::F32, batch, n, "L", a, "cpu");
    FAIL() << "expected an error";
  } catch (const ir::Error& e) {
    EXPECT_STREQ(e.what(), "eigh: matrix 21 of the batch has a NaN or Inf entry (eigh needs finite input)");
  }
}

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
