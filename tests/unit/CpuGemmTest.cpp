// The cpu backend's GEMM machinery (runtime/cpu/Gemm.h, gemm/): every
// micro-kernel this CPU has against a naive product in double, on full and
// partial register blocks, and its softmax row steps against std::exp; the packed GEMM on the shapes that take each of
// its paths (constant operands packed once, B packed before the tiles,
// split columns, transposed tiles, broadcast batches); and the convolutions
// lowered to it (groups 1 of every rank, stride, padding and dilation;
// grouped; depthwise; conv_transpose) against the reference interpreter, with the
// plan checked to really run them as GEMMs.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/cpu/CpuExecutable.h"
#include "runtime/Random.h"
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/gemm/MicroKernel.h"
#include "runtime/reference/Interpreter.h"

namespace graphc {
namespace {

using runtime::cpu::gemm::MicroKernel;

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

void expectNear(double got, double want, double k, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-5 * (1 + k)) << what;
}

std::vector<const MicroKernel*> everyKernel() {
  std::vector<const MicroKernel*> all;
  for (auto list : {runtime::cpu::gemm::avx512MicroKernels(), runtime::cpu::gemm::avx2MicroKernels(),
                    runtime::cpu::gemm::genericMicroKernels()})
    all.insert(all.end(), list.begin(), list.end());
  return all;
}

TEST(MicroKernels, EveryKernelThisCpuHasMatchesANaiveProduct) {
  const std::vector<const MicroKernel*> kernels = everyKernel();
  ASSERT_FALSE(kernels.empty());
  for (const MicroKernel* kernel : kernels) {
    const int mr = kernel->mr, nr = kernel->nr;
    for (int64_t k : {0, 1, 7, 64, 200}) {
      // Full and partial blocks, and the few-row blocks that run kernels of
      // a quarter and a half of mr rows (a batch-1 or -2 linear layer).
      for (auto [rows, cols] : {std::pair{mr, nr}, std::pair{1, nr}, std::pair{2, nr - 3}, std::pair{(mr + 1) / 2, nr},
                                std::pair{mr, 3}, std::pair{mr - 1, nr - 1}}) {
        const std::string what = fmt::format("{} {}x{} k={} block {}x{}", kernel->isa, mr, nr, k, rows, cols);
        std::vector<float> a = randomFloats(static_cast<size_t>(k * mr), 1),
                           b = randomFloats(static_cast<size_t>(k * nr), 2);
        const int64_t ldc = nr + 5;
        std::vector<float> c(static_cast<size_t>(mr * ldc), 1234.5f);
        kernel->run(k, a.data(), b.data(), c.data(), ldc, rows, cols, false);
        for (int i = 0; i < mr; ++i)
          for (int j = 0; j < ldc; ++j) {
            const float got = c[static_cast<size_t>(i * ldc + j)];
            if (i >= rows || j >= cols) {  // outside the block: untouched
              EXPECT_EQ(got, 1234.5f) << what << " wrote outside its block at " << i << "," << j;
              continue;
            }
            double want = 0;
            for (int64_t p = 0; p < k; ++p)
              want += double(a[static_cast<size_t>(p * mr + i)]) * b[static_cast<size_t>(p * nr + j)];
            expectNear(got, want, static_cast<double>(k), what);
          }
        // Accumulating a second block of k adds into what is there.
        std::vector<float> twice = c;
        kernel->run(k, a.data(), b.data(), twice.data(), ldc, rows, cols, true);
        for (int i = 0; i < rows; ++i)
          for (int j = 0; j < cols; ++j)
            expectNear(twice[static_cast<size_t>(i * ldc + j)], 2.0 * c[static_cast<size_t>(i * ldc + j)],
                       static_cast<double>(k), what + " (accumulate)");
        // The indirect form on the same A, read through row pointers and offsets.
        std::vector<float> image(static_cast<size_t>(mr * (k + 3)));
        std::vector<const float*> rowPointers;
        std::vector<int64_t> offsets;
        for (int64_t p = 0; p < k; ++p) offsets.push_back(p + 2);
        for (int i = 0; i < mr; ++i) {
          rowPointers.push_back(image.data() + i * (k + 3));
          for (int64_t p = 0; p < k; ++p)
            image[static_cast<size_t>(i * (k + 3) + p + 2)] = a[static_cast<size_t>(p * mr + i)];
        }
        std::vector<float> indirect(static_cast<size_t>(mr * ldc), 1234.5f);
        kernel->runIndirect(k, rowPointers.data(), offsets.data(), b.data(), indirect.data(), ldc, rows, cols, false);
        EXPECT_EQ(0, std::memcmp(indirect.data(), c.data(), c.size() * sizeof(float))) << what << " (indirect)";
        // accumulate adds the product to what C holds (an attention kernel's later blocks of keys)
        twice = indirect;
        kernel->runIndirect(k, rowPointers.data(), offsets.data(), b.data(), twice.data(), ldc, rows, cols, true);
        for (int i = 0; i < rows; ++i)
          for (int j = 0; j < cols; ++j)
            expectNear(twice[static_cast<size_t>(i * ldc + j)], 2.0 * c[static_cast<size_t>(i * ldc + j)],
                       static_cast<double>(k), what + " (indirect, accumulate)");
      }
    }
    // Depthwise: channels-last image, every position's origin and the taps.
    const int64_t channels = 19, positions = 11, taps = 5;
    std::vector<float> image = randomFloats(static_cast<size_t>((positions + taps) * channels), 3);
    std::vector<float> weights = randomFloats(static_cast<size_t>(taps * channels), 4);
    std::vector<int64_t> origins, tapOffsets;
    for (int64_t q = 0; q < positions; ++q) origins.push_back(q);
    for (int64_t t = 0; t < taps; ++t) tapOffsets.push_back(t);
    const int width = kernel->depthwiseWidth;
    for (int64_t c0 = 0; c0 < channels; c0 += width) {
      const int count = static_cast<int>(std::min<int64_t>(width, channels - c0));
      std::vector<float> out(static_cast<size_t>(positions * channels), 1234.5f);
      kernel->depthwise(taps, image.data() + c0, channels, origins.data(), positions, tapOffsets.data(),
                        weights.data() + c0, count, out.data() + c0, channels);
      for (int64_t q = 0; q < positions; ++q)
        for (int64_t c = 0; c < channels; ++c) {
          const float got = out[static_cast<size_t>(q * channels + c)];
          if (c < c0 || c >= c0 + count) {
            EXPECT_EQ(got, 1234.5f) << kernel->isa << " depthwise wrote channel " << c;
            continue;
          }
          double want = 0;
          for (int64_t t = 0; t < taps; ++t)
            want += double(image[static_cast<size_t>((q + t) * channels + c)]) *
                    weights[static_cast<size_t>(t * channels + c)];
          expectNear(got, want, taps, fmt::format("{} depthwise q={} c={}", kernel->isa, q, c));
        }
    }
  }
}

// A long reduction summed in one chain of FMAs drifts from the exact sum
// as √k; the kernels sum blocks of k apart, so that at k = 4096 (a large
// linear layer) they stay as close as the BLAS eager PyTorch calls (~3
// units of rounding, RMS, relative), not ~19 as one chain is.
TEST(MicroKernels, SoftmaxRowsMatchStdExp) {
  // An attention kernel's row steps (runtime/cpu/Attention.h): the row's
  // maximum with NaN propagated, and exp(s − max) with its sum; 0 where the
  // result would be subnormal, NaN kept. Row lengths around the vector widths.
  const float inf = std::numeric_limits<float>::infinity();
  for (const MicroKernel* kernel : everyKernel()) {
    for (int64_t n : {0, 1, 7, 8, 15, 16, 17, 33, 100}) {
      std::vector<float> row = randomFloats(static_cast<size_t>(n), 5);
      for (float& x : row) x *= 30.0f;  // exponents down to e^-60
      if (n > 3) row[2] = -inf;         // a masked key
      if (n > 5) row[4] = -100.0f;      // exp(−100 − max) is below FLT_MIN: 0
      const std::string what = fmt::format("{} (mr {}, nr {}), n = {}", kernel->isa, kernel->mr, kernel->nr, n);
      float max = -inf;
      for (float x : row) max = std::max(max, x);
      EXPECT_EQ(kernel->rowMax(row.data(), n), max) << what;
      std::vector<float> exps = row;
      const float sum = kernel->expAndSum(exps.data(), n, max);
      double want = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double e = std::exp(double(row[static_cast<size_t>(j)] - max));  // (the difference rounded, as in f32)
        const double expected = e < std::numeric_limits<float>::min() ? 0.0 : e;
        EXPECT_NEAR(exps[static_cast<size_t>(j)], expected, 4e-7 * expected) << what << " at " << j;
        want += expected;
      }
      EXPECT_NEAR(sum, want, 1e-6 * want) << what;
      if (n > 9) {
        std::vector<float> nan = row;
        nan[9] = std::numeric_limits<float>::quiet_NaN();
        EXPECT_TRUE(std::isnan(kernel->rowMax(nan.data(), n))) << what;
        EXPECT_TRUE(std::isnan(kernel->expAndSum(nan.data(), n, max))) << what;
        EXPECT_TRUE(std::isnan(nan[9])) << what;
      }
    }
  }
}

TEST(MicroKernels, LongReductionsStayCloseToTheExactSum) {
  for (const MicroKernel* kernel : everyKernel()) {
    const int mr = kernel->mr, nr = kernel->nr;
    const int64_t k = 4096;
    std::vector<float> a = randomFloats(static_cast<size_t>(k * mr), 5),
                       b = randomFloats(static_cast<size_t>(k * nr), 6);
    std::vector<float> c(static_cast<size_t>(mr * nr));
    kernel->run(k, a.data(), b.data(), c.data(), nr, mr, nr, false);
    double error = 0, magnitude = 0;
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nr; ++j) {
        double want = 0;
        for (int64_t p = 0; p < k; ++p)
          want += double(a[static_cast<size_t>(p * mr + i)]) * b[static_cast<size_t>(p * nr + j)];
        error += std::pow(c[static_cast<size_t>(i * nr + j)] - want, 2);
        magnitude += want * want;
      }
    const double unitsOfRounding = std::sqrt(error / magnitude) / std::ldexp(1.0, -24);
    EXPECT_LT(unitsOfRounding, 8) << kernel->isa << " " << mr << "x" << nr;
  }
}

/// C = A · B (Bᵀ when transposed) in double, per batch index.
std::vector<double> naiveGemm(const runtime::cpu::GemmProblem& p) {
  std::vector<double> c;
  const auto* a = static_cast<const float*>(p.a);
  const auto* b = static_cast<const float*>(p.b);
  for (size_t t = 0; t < p.aOffsets.size(); ++t)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < p.k; ++q)
          s += double(a[p.aOffsets[t] + i * p.k + q]) * b[p.bOffsets[t] + (p.transposeB ? j * p.k + q : q * p.n + j)];
        c.push_back(s);
      }
  return c;
}

TEST(PackedGemm, EveryPathMatchesANaiveGemm) {
  runtime::ThreadPool pool(3);
  struct Case {
    int64_t batch, m, n, k;
    bool transposeB, prepackA, prepackB, broadcastB;
  };
  const Case cases[] = {
      {1, 37, 45, 19, true, false, false, false},    // a linear: tiles per call
      {1, 600, 70, 33, false, false, false, false},  // row blocks share B, packed first
      {1, 3, 200, 130, true, false, true, false},    // a short GEMM: columns split; B packed once
      {4, 64, 8, 64, false, false, false, false},    // attention's [64, 64]·[64, 8]: transposed tiles
      {3, 17, 29, 0, false, false, false, false},    // k = 0: zeros
      {5, 9, 33, 12, false, true, true, true},       // both packed once, B broadcast over the batch
      {1, 40, 70, 600, true, false, true, false},    // k in three blocks (kKc = 256), the last partial
      // Rows too many for the output tile over all of n: column blocks
      // (the last partial) under several row blocks, B packed first; and
      // over a batch, B transposed.
      {1, 400, 2100, 300, false, false, false, false},
      {2, 100, 2800, 64, true, false, false, false},
  };
  for (const Case& c : cases) {
    const std::string what = fmt::format("batch {} {}x{}x{}{}{}{}", c.batch, c.m, c.n, c.k, c.transposeB ? " Bt" : "",
                                         c.prepackA ? " A packed" : "", c.prepackB ? " B packed" : "");
    const int64_t bMatrices = c.broadcastB ? 1 : c.batch;
    std::vector<float> a = randomFloats(static_cast<size_t>(c.batch * c.m * c.k), 5);
    std::vector<float> b = randomFloats(static_cast<size_t>(bMatrices * c.k * c.n), 6);
    runtime::cpu::GemmProblem p;
    p.a = a.data();
    p.b = b.data();
    p.m = c.m;
    p.n = c.n;
    p.k = c.k;
    p.transposeB = c.transposeB;
    for (int64_t t = 0; t < c.batch; ++t) {
      p.aOffsets.push_back(t * c.m * c.k);
      p.bOffsets.push_back(c.broadcastB ? 0 : t * c.k * c.n);
    }
    runtime::cpu::PackedWeights packedA, packedB;
    if (c.prepackA) {
      packedA = runtime::cpu::packWeightsA(a.data(), c.batch, c.m, c.k, runtime::cpu::gemm::hostMicroKernel().mr);
      p.packedA = &packedA;
    }
    if (c.prepackB) {
      packedB = runtime::cpu::packWeightsB(b.data(), bMatrices, c.k, c.n, c.transposeB);
      p.packedB = &packedB;
    }
    std::vector<float> out(static_cast<size_t>(c.batch * c.m * c.n), NAN);
    runtime::cpu::GemmScratch scratch;
    runtime::cpu::gemmWithEpilogue(
        p,
        [&](int64_t begin, int64_t end, const void* acc) {
          std::memcpy(out.data() + begin, acc, static_cast<size_t>(end - begin) * sizeof(float));
        },
        scratch, pool);
    const std::vector<double> want = naiveGemm(p);
    for (size_t i = 0; i < want.size(); ++i) expectNear(out[i], want[i], static_cast<double>(c.k), what);
  }
}

/// A graph with one op over parameters of the given types, compiled for
/// the cpu and run against the reference interpreter; and whether the
/// plan ran it as a GEMM step.
/// `body`: lines before the op's (constants).
void expectConvolutionMatches(const std::string& params, const std::string& op, const std::string& result,
                              const std::string& body = "") {
  const std::string text =
      fmt::format("graph @g({}) -> ({}) {{\n{}  %r = {}\n  %y = relu(%r)\n  return %y\n}}\n", params, result, body, op);
  auto m = testing::optimisedOk(text);
  ASSERT_TRUE(m) << text;
  const ir::Graph& g = *m->entry();
  std::vector<runtime::Tensor> inputs;
  uint64_t seed = 11;
  for (const auto& v : g.body.params())
    inputs.push_back(runtime::randomTensor(v->type.dtype, runtime::concreteShape(v->type), seed++));
  auto executable = codegen::cpu::compileGraph(g);
  EXPECT_NE(executable->describe().find("gemm+epilogue"), std::string::npos) << "not run as a GEMM:\n"
                                                                             << executable->describe() << text;
  const std::vector<runtime::Tensor> got = executable->run(inputs);
  const std::vector<runtime::Tensor> want = runtime::interpret(g, inputs);
  EXPECT_TRUE(testing::allClose(got[0], want[0], {1e-5, 1e-5})) << text;
  // Again with the same shapes: the rebound plan, the same values.
  const std::vector<runtime::Tensor> again = executable->run(inputs);
  EXPECT_EQ(0, std::memcmp(again[0].data(), got[0].data(), got[0].nbytes())) << text;
}

/// `%name = constant() {value = dense<...>}` of random f32 values.
std::string randomConstant(const std::string& name, const std::vector<int64_t>& shape, uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  const std::vector<float> values = randomFloats(static_cast<size_t>(count), seed);
  std::string hex;
  for (float v : values) {
    unsigned char bytes[sizeof(float)];
    std::memcpy(bytes, &v, sizeof v);
    for (unsigned char b : bytes) hex += fmt::format("{:02X}", b);
  }
  return fmt::format("  %{} = constant() {{value = dense<f32[{}], \"0x{}\">}} : f32[{}]\n", name,
                     fmt::join(shape, ", "), hex, fmt::join(shape, ", "));
}

TEST(CpuConvolution, GroupsOneOfEveryRankRunsAsAGemm) {
  expectConvolutionMatches("%x: f32[2, 3, 9], %w: f32[5, 3, 3], %b: f32[5]",
                           "conv(%x, %w, %b) {stride = [2], padding = [1, 2], dilation = [2]}", "f32[2, 5, 4]");
  expectConvolutionMatches("%x: f32[2, 4, 11, 7], %w: f32[6, 4, 3, 2], %b: f32[6]",
                           "conv(%x, %w, %b) {stride = [2, 1], padding = [1, 0, 2, 1], dilation = [1, 2]}",
                           "f32[2, 6, 6, 6]");
  expectConvolutionMatches("%x: f32[1, 2, 5, 6, 4], %w: f32[3, 2, 2, 3, 2]",
                           "conv(%x, %w) {padding = [0, 1, 1, 0, 1, 1]}", "f32[1, 3, 4, 6, 5]");
  // 1×1 at stride 1 (pointwise: the plain GEMM on the image as it lies),
  // channels past one register block; its filters as a graph input and as
  // a constant packed when the graph is compiled.
  expectConvolutionMatches("%x: f32[3, 40, 6, 6], %w: f32[48, 40, 1, 1], %b: f32[48]", "conv(%x, %w, %b)",
                           "f32[3, 48, 6, 6]");
  expectConvolutionMatches("%x: f32[2, 40, 7, 9], %b: f32[70]", "conv(%x, %w, %b)", "f32[2, 70, 7, 9]",
                           randomConstant("w", {70, 40, 1, 1}, 8));
  // 1×1 with padding or stride: windows again.
  expectConvolutionMatches("%x: f32[2, 16, 7, 7], %w: f32[24, 16, 1, 1]",
                           "conv(%x, %w) {stride = [2, 2], padding = [1, 1, 1, 1]}", "f32[2, 24, 5, 5]");
  expectConvolutionMatches("%x: f32[5, 16, 1, 1], %w: f32[40, 16, 3, 3], %b: f32[40]",
                           "conv(%x, %w, %b) {padding = [1, 1, 1, 1]}",
                           "f32[5, 40, 1, 1]");  // one position per image: blocks span the images
}

TEST(CpuConvolution, DepthwiseRunsAsAGemm) {
  expectConvolutionMatches("%x: f32[2, 21, 9, 8], %w: f32[21, 1, 3, 3], %b: f32[21]",
                           "conv(%x, %w, %b) {stride = [2, 2], padding = [1, 1, 1, 1], groups = 21}",
                           "f32[2, 21, 5, 4]");
  expectConvolutionMatches("%x: f32[1, 40, 7, 7], %w: f32[40, 1, 5, 5]",
                           "conv(%x, %w) {padding = [2, 2, 2, 2], dilation = [1, 1], groups = 40}", "f32[1, 40, 7, 7]");
  // Rows of several vectors (four at a time, then the rest), stride 2 on
  // an odd width, dilation, a 7×7 window (ConvNeXt), uneven padding.
  expectConvolutionMatches("%x: f32[2, 3, 9, 150], %w: f32[3, 1, 3, 3], %b: f32[3]",
                           "conv(%x, %w, %b) {padding = [1, 1, 1, 1], groups = 3}", "f32[2, 3, 9, 150]");
  expectConvolutionMatches("%x: f32[1, 5, 23, 37], %w: f32[5, 1, 3, 3]",
                           "conv(%x, %w) {stride = [2, 2], padding = [0, 1, 1, 0], groups = 5}", "f32[1, 5, 11, 18]");
  expectConvolutionMatches("%x: f32[1, 4, 20, 21], %w: f32[4, 1, 3, 3]",
                           "conv(%x, %w) {stride = [1, 3], padding = [2, 2, 2, 2], dilation = [2, 2], groups = 4}",
                           "f32[1, 4, 20, 7]");
  expectConvolutionMatches("%x: f32[2, 6, 20, 20], %b: f32[6]", "conv(%x, %w, %b) {padding = [3, 3, 3, 3], groups = 6}",
                           "f32[2, 6, 20, 20]", randomConstant("w", {6, 1, 7, 7}, 9));
  // Rows shorter than a vector, and 1-D: channels-last.
  expectConvolutionMatches("%x: f32[2, 6, 14, 14], %b: f32[6]", "conv(%x, %w, %b) {padding = [3, 3, 3, 3], groups = 6}",
                           "f32[2, 6, 14, 14]", randomConstant("w", {6, 1, 7, 7}, 10));
  expectConvolutionMatches("%x: f32[2, 12, 30], %w: f32[12, 1, 5]", "conv(%x, %w) {padding = [2, 2], groups = 12}",
                           "f32[2, 12, 30]");
}

TEST(CpuConvolution, GroupedRunsAsAGemmGroupByGroup) {
  // Six channels a group: a narrow kernel's partial block per group.
  expectConvolutionMatches("%x: f32[2, 12, 9, 8], %w: f32[18, 4, 3, 3], %b: f32[18]",
                           "conv(%x, %w, %b) {stride = [2, 2], padding = [1, 1, 1, 1], groups = 3}",
                           "f32[2, 18, 5, 4]");
  // 1×1 with 40 channels a group: past one register block.
  expectConvolutionMatches("%x: f32[3, 64, 6, 6], %w: f32[80, 32, 1, 1]", "conv(%x, %w) {groups = 2}",
                           "f32[3, 80, 6, 6]");
  // A depth multiplier of 2: each input channel feeds two output channels.
  expectConvolutionMatches("%x: f32[1, 8, 7, 7], %w: f32[16, 1, 3, 3]",
                           "conv(%x, %w) {padding = [1, 1, 1, 1], dilation = [1, 1], groups = 8}", "f32[1, 16, 7, 7]");
  // 1-D (a wav2vec2-style grouped positional convolution).
  expectConvolutionMatches("%x: f32[2, 16, 20], %w: f32[16, 4, 5]", "conv(%x, %w) {padding = [2, 2], groups = 4}",
                           "f32[2, 16, 20]");
  // Constant filters: packed group by group when the graph is compiled.
  expectConvolutionMatches("%x: f32[2, 24, 8, 8], %b: f32[18]", "conv(%x, %w, %b) {padding = [1, 1, 1, 1], groups = 3}",
                           "f32[2, 18, 8, 8]", randomConstant("w", {18, 8, 3, 3}, 7));
}

TEST(CpuConvolution, PoolsRunPlaneByPlane) {
  // GoogLeNet's 3×3 stride-1 max pool, ResNet's 3×3 stride-2 one with
  // ceil_mode, a dilated one, and average pools whose divisor varies at
  // the border (count_include_pad either way, ceil_mode past the padding).
  expectConvolutionMatches("%x: f32[2, 5, 14, 14]",
                           "max_pool(%x) {kernel = [3, 3], stride = [1, 1], padding = [1, 1, 1, 1]}",
                           "f32[2, 5, 14, 14]");
  expectConvolutionMatches("%x: f32[1, 3, 21, 40]",
                           "max_pool(%x) {kernel = [3, 3], stride = [2, 2], padding = [1, 1, 1, 1], ceil_mode = true}",
                           "f32[1, 3, 11, 21]");
  expectConvolutionMatches("%x: f32[1, 2, 17, 33]",
                           "max_pool(%x) {kernel = [2, 3], stride = [1, 2], dilation = [2, 2]}", "f32[1, 2, 15, 15]");
  expectConvolutionMatches(
      "%x: f32[2, 4, 9, 20]",
      "avg_pool(%x) {kernel = [3, 3], stride = [1, 1], padding = [1, 1, 1, 1], count_include_pad = false}",
      "f32[2, 4, 9, 20]");
  expectConvolutionMatches("%x: f32[2, 4, 10, 20]",
                           "avg_pool(%x) {kernel = [3, 3], stride = [2, 2], padding = [1, 1, 1, 1], ceil_mode = true, "
                           "count_include_pad = true}",
                           "f32[2, 4, 6, 11]");
  expectConvolutionMatches("%x: f32[1, 6, 8, 8]", "avg_pool(%x) {kernel = [2, 2]}", "f32[1, 6, 4, 4]");
}

TEST(CpuConvolution, MaxPoolKeepsNaN) {
  // A NaN anywhere in a window is the window's maximum, as in torch.
  auto m = testing::optimisedOk(
      "graph @g(%x: f32[1, 1, 4, 20]) -> (f32[1, 1, 4, 20]) {\n"
      "  %p = max_pool(%x) {kernel = [3, 3], stride = [1, 1], padding = [1, 1, 1, 1]}\n  return %p\n}\n");
  ASSERT_TRUE(m);
  runtime::Tensor x = runtime::randomTensor(ir::DType::F32, {1, 1, 4, 20}, 3);
  x.as<float>()[0 * 20 + 0] = NAN;   // row 0, column 0
  x.as<float>()[3 * 20 + 10] = NAN;  // row 3, column 10
  const runtime::Tensor y = codegen::cpu::compileGraph(*m->entry())->run({x})[0];
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 20; ++c) {
      const bool nan = (r <= 1 && c <= 1) || (r >= 2 && c >= 9 && c <= 11);
      EXPECT_EQ(std::isnan(y.as<float>()[r * 20 + c]), nan) << r << "," << c;
    }
}

TEST(CpuConvolution, TransposedRunsAsAGemm) {
  expectConvolutionMatches(
      "%x: f32[2, 6, 5, 4], %w: f32[6, 3, 3, 2], %b: f32[3]",
      "conv_transpose(%x, %w, %b) {stride = [2, 3], padding = [1, 0, 1, 1], output_padding = [1, 2]}",
      "f32[2, 3, 10, 12]");
  expectConvolutionMatches("%x: f32[1, 4, 7], %w: f32[4, 5, 3]",
                           "conv_transpose(%x, %w) {stride = [1], dilation = [2]}", "f32[1, 5, 11]");
}

}  // namespace
}  // namespace graphc
