// The C API of graphc_runtime.h over deploy::loadPackage.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "deploy/Loader.h"
#include "deploy/graphc_runtime.h"
#include "ir/Diagnostics.h"
#include "runtime/Tensor.h"

#ifndef GRAPHC_VERSION
#define GRAPHC_VERSION "unknown"
#endif

struct graphc_model {
  graphc::deploy::LoadedPackage package;
  std::vector<std::string> inputNames, inputTypes;
  std::vector<graphc::runtime::Tensor> outputs;
  bool lastRunFailed = false;                      // then there are no outputs to hand out
  ~graphc_model() { package.executable.reset(); }  // before the graph it refers to
};

namespace {

thread_local std::string lastError;

int failure(const std::string& what) {
  lastError = what;
  return -1;
}

/// Runs `f`, turning any exception into -1 and graphc_last_error().
template <typename F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    return failure(e.what());
  } catch (...) {
    return failure("unknown error");
  }
}

static_assert(GRAPHC_F16 == static_cast<int>(graphc::ir::DType::F16) &&
              GRAPHC_BOOL == static_cast<int>(graphc::ir::DType::Bool));

}  // namespace

extern "C" {

int graphc_load(const char* path, graphc_model** model) {
  if (!path || !model) return failure("graphc_load: null argument");
  *model = nullptr;
  return guarded([&] {
    auto m = std::make_unique<graphc_model>();
    m->package = graphc::deploy::loadPackage(path);
    for (const auto& p : m->package.module->entry()->body.params()) {
      m->inputNames.push_back(p->name);
      m->inputTypes.push_back(graphc::ir::toString(p->type));
    }
    *model = m.release();
  });
}

void graphc_free(graphc_model* model) { delete model; }

size_t graphc_num_inputs(const graphc_model* model) { return model ? model->inputNames.size() : 0; }
size_t graphc_num_outputs(const graphc_model* model) {
  return model ? model->package.module->entry()->resultTypes.size() : 0;
}
const char* graphc_input_name(const graphc_model* model, size_t index) {
  return model && index < model->inputNames.size() ? model->inputNames[index].c_str() : nullptr;
}
const char* graphc_input_type(const graphc_model* model, size_t index) {
  return model && index < model->inputTypes.size() ? model->inputTypes[index].c_str() : nullptr;
}

int graphc_run(graphc_model* model, const graphc_tensor* inputs, size_t count) {
  if (!model) return failure("graphc_run: null argument");
  // The previous run's outputs go first: a caller that checks only
  // graphc_output's status must not be handed them after this run fails.
  model->outputs.clear();
  model->lastRunFailed = true;
  if (count && !inputs) return failure("graphc_run: null argument");
  return guarded([&] {
    std::vector<graphc::runtime::Tensor> in;
    for (size_t i = 0; i < count; ++i) {
      const graphc_tensor& t = inputs[i];
      if (static_cast<int>(t.dtype) < 0 || static_cast<int>(t.dtype) > GRAPHC_BOOL)
        throw graphc::ir::Error(fmt::format("input {}: unknown dtype {}", i, static_cast<int>(t.dtype)));
      if (t.rank < 0 || (t.rank > 0 && !t.shape)) throw graphc::ir::Error(fmt::format("input {}: bad shape", i));
      std::vector<int64_t> shape(t.shape, t.shape + t.rank);
      for (int64_t d : shape)
        if (d < 0) throw graphc::ir::Error(fmt::format("input {}: a negative dim", i));
      in.push_back(graphc::runtime::Tensor::wrap(static_cast<graphc::ir::DType>(t.dtype), std::move(shape),
                                                 static_cast<std::byte*>(t.data)));
      if (in.back().nbytes() && !t.data) throw graphc::ir::Error(fmt::format("input {}: null data", i));
    }
    model->outputs = model->package.executable->run(in, {});
    model->lastRunFailed = false;
  });
}

int graphc_output(const graphc_model* model, size_t index, graphc_tensor* out) {
  if (!model || !out) return failure("graphc_output: null argument");
  if (model->lastRunFailed) return failure("graphc_output: the last graphc_run failed; it left no outputs");
  if (index >= model->outputs.size())
    return failure(fmt::format("graphc_output: no output {} (the last run made {})", index, model->outputs.size()));
  const graphc::runtime::Tensor& t = model->outputs[index];
  *out = {static_cast<graphc_dtype>(t.dtype()), static_cast<int32_t>(t.rank()), t.shape().data(),
          const_cast<std::byte*>(t.data())};
  return 0;
}

const char* graphc_last_error(void) { return lastError.c_str(); }
const char* graphc_runtime_version(void) { return GRAPHC_VERSION; }

}  // extern "C"
