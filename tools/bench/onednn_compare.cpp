// graphc's linears and convolutions against oneDNN's, on the shapes of the
// real-model suite, one thread each: the measurement behind the choice of
// graphc's own micro-kernels (docs/performance.md, "Prepacked weights:
// oneDNN or our own kernels"). graphc's side is the real thing: a graph
// relu(linear(x, W, b)) or relu(conv(x, W, b)) with W and b constants,
// compiled for the cpu, timed by replay() (weights packed once at compile
// time, the epilogue generated and fused). oneDNN's: the primitive with its
// weights in format_tag::any, reordered once, and the ReLU as an eltwise
// post-op. Activations stay NCHW / row-major, as graphc's graphs keep them.
// Run with GRAPHC_NUM_THREADS=1 and OMP_NUM_THREADS=1.
//
// Built only where Debian's libdnnl-dev is installed (tools/bench/CMakeLists.txt):
//   apt-get install libdnnl-dev && cmake build && ninja -C build graphc-onednn-compare
//   OMP_NUM_THREADS=1 build/bin/graphc-onednn-compare
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "frontend/api/graphc.h"

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

/// A constant's text: dense<f32[shape], "0x<bytes>">.
std::string dense(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  std::string hex;
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) hex += fmt::format("{:02X}", bytes[i]);
  return fmt::format("dense<f32[{}], \"0x{}\">", fmt::join(shape, ", "), hex);
}

/// Median microseconds of replay() of `text` compiled for the cpu, on `x`.
double graphcMicros(const std::string& text, const graphc::Tensor& x, const std::vector<int64_t>& outShape) {
  graphc::Executable exe = graphc::compile(graphc::Graph::parse(text));
  std::vector<graphc::Tensor> out = {graphc::Tensor(graphc::DType::F32, outShape)};
  exe.capture({x}, out);
  return medianMicros([&] { exe.replay(); });
}

graphc::Tensor tensorOf(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  graphc::Tensor t(graphc::DType::F32, shape);
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return t;
}

/// y = relu(x · wᵀ + b), x [m, k], w [n, k] (a linear).
void linear(int64_t m, int64_t n, int64_t k) {
  std::vector<float> x = randomFloats(static_cast<size_t>(m * k), 1), w = randomFloats(static_cast<size_t>(n * k), 2);
  std::vector<float> b = randomFloats(static_cast<size_t>(n), 3), y(static_cast<size_t>(m * n));
  const std::string text = fmt::format(
      "graph @linear(%x: f32[{m}, {k}]) -> (f32[{m}, {n}]) {{\n  %w = constant() {{value = {w}}} : f32[{n}, {k}]\n"
      "  %b = constant() {{value = {b}}} : f32[{n}]\n  %y = linear(%x, %w, %b)\n  %r = relu(%y)\n  return %r\n}}\n",
      fmt::arg("m", m), fmt::arg("n", n), fmt::arg("k", k), fmt::arg("w", dense(w, {n, k})),
      fmt::arg("b", dense(b, {n})));
  const double ours = graphcMicros(text, tensorOf(x, {m, k}), {m, n});

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
  const int64_t wc = depthwise ? 1 : c;
  const std::string text = fmt::format(
      "graph @conv(%x: f32[{N}, {C}, {H}, {H}]) -> (f32[{N}, {O}, {OH}, {OH}]) {{\n"
      "  %w = constant() {{value = {w}}} : f32[{O}, {WC}, {K}, {K}]\n  %b = constant() {{value = {b}}} : f32[{O}]\n"
      "  %y = conv(%x, %w, %b) {{stride = [{S}, {S}], padding = [{P}, {P}, {P}, {P}], groups = {G}}}\n"
      "  %r = relu(%y)\n  return %r\n}}\n",
      fmt::arg("N", batch), fmt::arg("C", c), fmt::arg("H", h), fmt::arg("O", o), fmt::arg("OH", oh),
      fmt::arg("WC", wc), fmt::arg("K", kernel), fmt::arg("S", stride), fmt::arg("P", pad), fmt::arg("G", groups),
      fmt::arg("w", dense(w, {o, wc, kernel, kernel})), fmt::arg("b", dense(b, {o})));
  const double ours = graphcMicros(text, tensorOf(x, {batch, c, h, h}), {batch, o, oh, oh});

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
  memory userW({wdims, memory::data_type::f32, depthwise ? memory::format_tag::goihw : memory::format_tag::oihw},
               engine, w.data());
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
  conv(2, 3, 32, 8, 7, 2, 3, false);    // resnet18's stem
  conv(2, 8, 8, 8, 3, 1, 1, false);     // resnet18's first stage
  conv(2, 32, 2, 64, 3, 2, 1, false);   // resnet18's last stage
  conv(2, 8, 32, 8, 3, 1, 1, false);    // unet's first level
  conv(2, 16, 16, 48, 1, 1, 0, false);  // a 1x1 expansion
  conv(2, 48, 8, 48, 3, 1, 1, true);    // depthwise 3x3
  conv(2, 144, 4, 144, 5, 1, 2, true);  // depthwise 5x5
  // A large GEMM, where packing and the micro-kernel dominate.
  linear(1024, 1024, 1024);
  return 0;
}
