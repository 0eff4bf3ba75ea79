// graphc-export-bench: what docs/export.md reports of exported packages on
// the real-model suite (tests/models), for each weight format (f32, mxfp8,
// mxfp6, mxfp4, and bf16):
//   - the package's size and the weights' bits per quantised value;
//   - load to first result: loadPackage + one run on test_data_set_0
//     (min and median of 7 loads, each a fresh load of the file);
//   - steady-state latency (interleaved rounds of every format, median);
//   - accuracy against the in-process f32 compile: max and mean absolute
//     error of the outputs on test_data_set_0, and for the classifiers
//     (one [batch, classes] output) top-1 agreement on 256 random inputs;
//   - that the f32 package's outputs equal the in-process compile's, bit
//     for bit.
//
//   graphc-export-bench [--models DIR] [--rounds N] [--markdown FILE]
// With --markdown, the table replaces the text between
// <!-- export-bench:begin --> and <!-- export-bench:end --> in FILE.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "frontend/api/graphc.h"
#include "runtime/FileIO.h"
#include "runtime/Random.h"

namespace fs = std::filesystem;
using namespace graphc;

namespace {

const std::vector<std::string> kModels = {"bert", "convnext", "diffusion_block",    "distilbert", "efficientnet_b0",
                                          "gpt2", "llama",    "mobilenet_v3_small", "resnet18",   "t5_encoder",
                                          "unet", "vit",      "whisper_encoder"};
const std::vector<std::string> kFormats = {"f32", "bf16", "mxfp8", "mxfp6", "mxfp4"};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  std::string model, format;
  int64_t bytes = 0;
  double bitsPerWeight = 0;
  double loadMin = 0, loadMedian = 0, steady = 0;
  double maxError = 0, meanError = 0;
  int agree = -1, total = 0;
  bool bitwise = false;
};

bool isClassifier(const Executable& exe) {
  const ir::Graph& g = exe.optimized().entry();
  return g.resultTypes.size() == 1 && g.resultTypes[0].rank() == 2 && g.body.params().size() == 1 &&
         ir::isFloat(g.body.param(0)->type.dtype) && !g.body.param(0)->type.shape[0].isStatic();
}

int argmax(const Tensor& t, int64_t row) {
  const int64_t classes = t.shape()[1];
  int best = 0;
  for (int64_t c = 1; c < classes; ++c)
    if (t.getDouble(row * classes + c) > t.getDouble(row * classes + best)) best = static_cast<int>(c);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path models = fs::path(GRAPHC_SOURCE_DIR) / "tests/models";
  std::string markdown;
  int rounds = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--models") models = argv[i + 1];
    if (flag == "--markdown") markdown = argv[i + 1];
    if (flag == "--rounds") rounds = std::stoi(argv[i + 1]);
  }
  std::vector<Row> rows;
  const fs::path tmp = fs::temp_directory_path() / fmt::format("graphc-export-bench-{}", ::getpid());
  fs::create_directories(tmp);
  for (const std::string& model : kModels) {
    const fs::path dir = models / model / "dynamo-dynamic";
    const LoadedModel loaded = loadModel(dir / "model.onnx");
    const Executable reference = compile(loaded.graph);
    const std::vector<Tensor> inputs = readTestDataInputs(dir / "model.onnx", loaded, dir / "test_data_set_0");
    const std::vector<Tensor> exact = reference.run(inputs);
    std::vector<Executable> loadedFormats;
    for (const std::string& format : kFormats) {
      Row row{model, format};
      const fs::path package = tmp / fmt::format("{}-{}.gcpkg", model, format);
      exportPackage(loaded.graph, package, {}, {.weights = format});
      row.bytes = static_cast<int64_t>(fs::file_size(package));
      std::vector<double> loads;
      std::vector<Tensor> got;
      for (int k = 0; k < 7; ++k) {
        const double start = now();
        const Executable exe = loadPackage(package);
        got = exe.run(inputs);
        loads.push_back(now() - start);
        if (k == 0) loadedFormats.push_back(exe);
      }
      row.loadMin = *std::min_element(loads.begin(), loads.end());
      row.loadMedian = median(loads);
      row.bitwise = true;
      double sum = 0;
      int64_t count = 0;
      for (size_t o = 0; o < exact.size(); ++o) {
        row.bitwise = row.bitwise && got[o].type() == exact[o].type() &&
                      std::memcmp(got[o].data(), exact[o].data(), exact[o].nbytes()) == 0;
        for (int64_t i = 0; i < exact[o].numel(); ++i) {
          const double e = std::fabs(got[o].getDouble(i) - exact[o].getDouble(i));
          row.maxError = std::max(row.maxError, e);
          sum += e;
          ++count;
        }
      }
      row.meanError = count ? sum / static_cast<double>(count) : 0;
      // The weights' bits per value: what the package stores of its
      // quantised constants (scales included) over their count.
      // Bits per quantised value: the element and one 8-bit scale per 32.
      const int bits = format == "mxfp8"   ? 8
                       : format == "mxfp6" ? 6
                       : format == "mxfp4" ? 4
                       : format == "bf16"  ? 16
                                           : 32;
      row.bitsPerWeight = format == "f32" || format == "bf16" ? bits : bits + 8.0 / 32;
      if (isClassifier(loadedFormats.back())) {
        const ir::TensorType& t = loaded.graph.entry().body.param(0)->type;
        row.agree = 0;
        for (int batch = 0; batch < 8; ++batch) {
          std::vector<int64_t> shape = {32};
          for (size_t d = 1; d < t.shape.size(); ++d) shape.push_back(t.shape[d].size);
          const Tensor x = runtime::randomTensor(t.dtype, shape, 1000 + static_cast<uint64_t>(batch));
          const Tensor want = reference.run({x})[0], have = loadedFormats.back().run({x})[0];
          for (int64_t r = 0; r < 32; ++r) row.agree += argmax(want, r) == argmax(have, r) ? 1 : 0;
        }
        row.total = 256;
      }
      rows.push_back(row);
      fs::remove(package);
    }
    // Steady state: the formats' runs interleaved, round after round.
    std::vector<std::vector<double>> times(kFormats.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t f = 0; f < kFormats.size(); ++f) {
        loadedFormats[f].run(inputs);
        const double start = now();
        for (int k = 0; k < 10; ++k) loadedFormats[f].run(inputs);
        times[f].push_back((now() - start) / 10);
      }
    for (size_t f = 0; f < kFormats.size(); ++f) rows[rows.size() - kFormats.size() + f].steady = median(times[f]);
    std::fprintf(stderr, "%s done\n", model.c_str());
  }
  fs::remove_all(tmp);

  std::string table =
      "| model | weights | package (KB) | bits/weight | load → first result min / median (ms) | steady (ms) | vs f32 | "
      "max error | mean error | top-1 agreement | f32 bitwise |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  double worstLoad = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Row& base = rows[i - i % kFormats.size()];
    worstLoad = std::max(worstLoad, r.loadMedian);
    table +=
        fmt::format("| {} | {} | {:.1f} | {:.2f} | {:.2f} / {:.2f} | {:.4f} | {:.2f} | {:.3g} | {:.3g} | {} | {} |\n",
                    r.model, r.format, r.bytes / 1024.0, r.bitsPerWeight, r.loadMin * 1e3, r.loadMedian * 1e3,
                    r.steady * 1e3, r.steady / base.steady, r.maxError, r.meanError,
                    r.agree < 0 ? std::string("—") : fmt::format("{}/{}", r.agree, r.total),
                    r.format == "f32" ? (r.bitwise ? "yes" : "**no**") : "—");
  }
  table += fmt::format("\nSlowest load → first result (median): {:.2f} ms.\n", worstLoad * 1e3);
  std::fputs(table.c_str(), stdout);
  if (!markdown.empty()) {
    std::string doc = runtime::readFile(markdown);
    const std::string begin = "<!-- export-bench:begin -->\n", end = "<!-- export-bench:end -->";
    const size_t a = doc.find(begin), b = doc.find(end);
    if (a == std::string::npos || b == std::string::npos || b < a) {
      std::fprintf(stderr, "%s: no export-bench markers\n", markdown.c_str());
      return 1;
    }
    doc = doc.substr(0, a + begin.size()) + table + doc.substr(b);
    std::ofstream(markdown) << doc;
  }
  return 0;
}
