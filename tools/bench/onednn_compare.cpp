// graphc's packed GEMM and convolutions against oneDNN's, on the shapes of
// the real-model suite, one thread each: the measurement behind the choice
// of graphc's own micro-kernels (docs/performance.md, "Prepacked weights:
// oneDNN or our own kernels"). Both sides get their weights packed once,
// outside the timed loop (oneDNN: format_tag::any, reordered once), and a
// ReLU fused after the product (oneDNN: an eltwise post-op; graphc: the
// epilogue on each tile). Activations stay NCHW / row-major, as graphc's
// graphs keep them.
//
// Built only where Debian's libdnnl-dev is installed (tools/bench/CMakeLists.txt):
//   apt-get install libdnnl-dev && cmake build && ninja -C build graphc-onednn-compare
//   OMP_NUM_THREADS=1 build/bin/graphc-onednn-compare
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cpu/gemm/Packing.h"

namespace {

using dnnl::memory;

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

/// Median microseconds of `fn` over enough calls for ~0.2 s, after warm-up.
double medianMicros(const std::function<void()>& fn) {
  for (int i = 0; i < 20; ++i) fn();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  const double once = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  const int calls = std::clamp(static_cast<int>(200000 / std::max(once, 0.1)), 20, 20000);
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

void relu(float* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = p[i] > 0 ? p[i] : 0;
}

/// y = relu(x · wᵀ + b), x [m, k], w [n, k] (a linear).
void linear(int64_t m, int64_t n, int64_t k) {
  std::vector<float> x = randomFloats(static_cast<size_t>(m * k), 1), w = randomFloats(static_cast<size_t>(n * k), 2);
  std::vector<float> b = randomFloats(static_cast<size_t>(n), 3), y(static_cast<size_t>(m * n));
  graphc::runtime::ThreadPool pool(1);
  graphc::runtime::cpu::PackedWeights packed = graphc::runtime::cpu::packWeightsB(w.data(), 1, k, n, true);
  graphc::runtime::cpu::GemmProblem p;
  p.a = x.data();
  p.b = w.data();
  p.m = m;
  p.n = n;
  p.k = k;
  p.transposeB = true;
  p.aOffsets = {0};
  p.bOffsets = {0};
  p.packedB = &packed;
  graphc::runtime::cpu::GemmScratch scratch;
  const double ours = medianMicros([&] {
    graphc::runtime::cpu::gemmWithEpilogue(
        p,
        [&](int64_t begin, int64_t end, const void* acc) {
          const auto* a = static_cast<const float*>(acc);
          for (int64_t i = begin; i < end; ++i) {
            const float v = a[i - begin] + b[static_cast<size_t>(i % n)];
            y[static_cast<size_t>(i)] = v > 0 ? v : 0;
          }
        },
        scratch, pool);
  });

  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory::desc xd({m, k}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc wd({k, n}, memory::data_type::f32, memory::format_tag::any);
  memory::desc bd({1, n}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc yd({m, n}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(xd, wd, bd, yd), attr, engine);
  dnnl::matmul mm(pd);
  memory xm(xd, engine, x.data()), bm(bd, engine, b.data()), ym(yd, engine, y.data());
  memory userW({{k, n}, memory::data_type::f32, memory::format_tag::ba}, engine, w.data());
  memory wm(pd.weights_desc(), engine);
  dnnl::reorder(userW, wm).execute(stream, userW, wm);
  stream.wait();
  const double theirs = medianMicros([&] {
    mm.execute(stream, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, ym}});
    stream.wait();
  });
  std::printf("| linear %ldx%ldx%ld | %.2f | %.2f | %.2f |\n", static_cast<long>(m), static_cast<long>(n),
              static_cast<long>(k), ours, theirs, ours / theirs);
}

/// y = relu(conv(x, w) + b), NCHW, square kernel, groups 1 or depthwise.
void conv(int64_t batch, int64_t c, int64_t h, int64_t o, int64_t kernel, int64_t stride, int64_t pad, bool depthwise) {
  const int64_t groups = depthwise ? c : 1, cin = depthwise ? 1 : c;
  const int64_t oh = (h + 2 * pad - kernel) / stride + 1;
  std::vector<float> x = randomFloats(static_cast<size_t>(batch * c * h * h), 4);
  std::vector<float> w = randomFloats(static_cast<size_t>(o * cin * kernel * kernel), 5);
  std::vector<float> b = randomFloats(static_cast<size_t>(o), 6), y(static_cast<size_t>(batch * o * oh * oh));
  graphc::runtime::ThreadPool pool(1);
  graphc::runtime::cpu::gemm::ConvGeometry g(depthwise, c, {h, h}, {oh, oh}, {kernel, kernel}, {stride, stride}, {1, 1},
                                             {pad, pad});
  graphc::runtime::cpu::PackedWeights packed = depthwise
                                                   ? graphc::runtime::cpu::packDepthwiseFilters(w.data(), o, g.k())
                                                   : graphc::runtime::cpu::packFilters(w.data(), o, g.k());
  graphc::runtime::cpu::GemmProblem p;
  p.a = w.data();
  p.b = x.data();
  p.m = o;
  p.k = g.k();
  p.n = g.positions();
  p.conv = &g;
  p.packedA = &packed;
  for (int64_t i = 0; i < batch; ++i) {
    p.aOffsets.push_back(0);
    p.bOffsets.push_back(i * g.imageFloats());
  }
  graphc::runtime::cpu::GemmScratch scratch;
  const int64_t positions = oh * oh;
  const double ours = medianMicros([&] {
    graphc::runtime::cpu::gemmWithEpilogue(
        p,
        [&](int64_t begin, int64_t end, const void* acc) {
          const auto* a = static_cast<const float*>(acc);
          for (int64_t i = begin; i < end; ++i) {
            const float v = a[i - begin] + b[static_cast<size_t>(i / positions % o)];
            y[static_cast<size_t>(i)] = v > 0 ? v : 0;
          }
        },
        scratch, pool);
  });

  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory::desc xd({batch, c, h, h}, memory::data_type::f32, memory::format_tag::nchw);
  memory::desc yd({batch, o, oh, oh}, memory::data_type::f32, memory::format_tag::nchw);
  memory::dims wdims = depthwise ? memory::dims{groups, 1, 1, kernel, kernel} : memory::dims{o, c, kernel, kernel};
  memory::desc wd(wdims, memory::data_type::f32, memory::format_tag::any);
  memory::desc bd({o}, memory::data_type::f32, memory::format_tag::a);
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, xd, wd,
                                      bd, yd, {stride, stride}, {pad, pad}, {pad, pad}),
      attr, engine);
  dnnl::convolution_forward cv(pd);
  memory xm(xd, engine, x.data()), bm(bd, engine, b.data()), ym(yd, engine, y.data());
  memory userW({wdims, memory::data_type::f32, depthwise ? memory::format_tag::goihw : memory::format_tag::oihw}, engine,
               w.data());
  memory wm(pd.weights_desc(), engine);
  dnnl::reorder(userW, wm).execute(stream, userW, wm);
  stream.wait();
  const double theirs = medianMicros([&] {
    cv.execute(stream, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, ym}});
    stream.wait();
  });
  std::printf("| %sconv %ldx%ldx%ldx%ld -> %ld, %ldx%ld s%ld | %.2f | %.2f | %.2f |\n", depthwise ? "depthwise " : "",
              static_cast<long>(batch), static_cast<long>(c), static_cast<long>(h), static_cast<long>(h),
              static_cast<long>(o), static_cast<long>(kernel), static_cast<long>(kernel), static_cast<long>(stride),
              ours, theirs, ours / theirs);
}

}  // namespace

int main() {
  std::printf("| shape (one thread) | graphc us | oneDNN us | graphc / oneDNN |\n|---|---:|---:|---:|\n");
  // The transformers' linears at batch 2 × sequence 32 (hidden 32, FFN 64 and 128).
  linear(64, 32, 32);
  linear(64, 96, 32);
  linear(64, 128, 32);
  linear(64, 32, 128);
  linear(256, 128, 32);  // batch 8
  // The CNNs' convolutions at batch 2.
  conv(2, 3, 32, 8, 7, 2, 3, false);   // resnet18's stem
  conv(2, 8, 8, 8, 3, 1, 1, false);    // resnet18's first stage
  conv(2, 32, 2, 64, 3, 2, 1, false);  // resnet18's last stage
  conv(2, 8, 32, 8, 3, 1, 1, false);   // unet's first level
  conv(2, 16, 16, 48, 1, 1, 0, false); // a 1x1 expansion
  conv(2, 48, 8, 48, 3, 1, 1, true);   // depthwise 3x3
  conv(2, 144, 4, 144, 5, 1, 2, true); // depthwise 5x5
  // A large GEMM, where packing and the micro-kernel dominate.
  linear(1024, 1024, 1024);
  return 0;
}
