#include "frontend/api/Compiled.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace graphc {

namespace {

/// The guard set of one cached Executable.
struct Guards {
  struct Input {
    DType dtype;
    std::vector<std::optional<int64_t>> sizes;  // nullopt: a dynamic dim
  };
  std::vector<Input> inputs;
};

/// The first guard `inputs` fail, as "input 0 dim 0: 32 != 64"; "" if none.
std::string firstFailure(const Guards& g, const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs.size()) return fmt::format("{} inputs != {}", g.inputs.size(), inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Guards::Input& want = g.inputs[k];
    const Tensor& t = inputs[k];
    if (t.dtype() != want.dtype)
      return fmt::format("input {} dtype: {} != {}", k, ir::dtypeName(want.dtype), ir::dtypeName(t.dtype()));
    if (static_cast<size_t>(t.rank()) != want.sizes.size())
      return fmt::format("input {} rank: {} != {}", k, want.sizes.size(), t.rank());
    for (size_t d = 0; d < want.sizes.size(); ++d)
      if (want.sizes[d] && *want.sizes[d] != t.shape()[d])
        return fmt::format("input {} dim {}: {} != {}", k, d, *want.sizes[d], t.shape()[d]);
  }
  return "";
}

bool logsWanted(std::string_view topic) {
  const char* env = std::getenv("GRAPHC_LOGS");
  if (!env) return false;
  std::string_view list = env;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    if (!item.empty() && item.front() == '+') item.remove_prefix(1);
    if (item == topic) return true;
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return false;
}

void toStderr(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

}  // namespace

struct CompiledFunction::State {
  struct Entry {
    Guards guards;
    Executable executable;
  };

  /// A compile in progress: callers whose inputs pass its guards wait for
  /// it rather than compile the same thing again.
  struct Pending {
    Guards guards;
    std::shared_future<Executable> executable;
  };

  BranchFn fn;
  CompileOptions options;
  mutable std::mutex mutex;    // guards the members below; never held while tracing, compiling or running
  std::vector<Entry> entries;  // most recent first
  std::vector<std::shared_ptr<Pending>> pending;
  CompileStats stats;
  LogSink recompileLog;  // null: not logged
  LogSink warningLog = toStderr;
  bool warned = false;

  /// The specs to trace `inputs` with, and the guards that go with them.
  std::pair<std::vector<TensorSpec>, Guards> specialise(const std::vector<Tensor>& inputs, bool dynamic) const {
    std::vector<TensorSpec> specs;
    Guards guards;
    for (size_t k = 0; k < inputs.size(); ++k) {
      TensorSpec spec{inputs[k].dtype(), {}, fmt::format("arg{}", k)};
      Guards::Input guard{inputs[k].dtype(), {}};
      for (int64_t size : inputs[k].shape()) {
        spec.shape.emplace_back(size);
        guard.sizes.emplace_back(size);
      }
      specs.push_back(std::move(spec));
      guards.inputs.push_back(std::move(guard));
    }
    if (!dynamic) return {specs, guards};
    int fresh = 0;
    for (const DynamicDim& d : options.dynamicDims) {
      if (d.input >= inputs.size() || d.dim < 0 || d.dim >= inputs[d.input].rank())
        throw Error(fmt::format(
            "{}: dynamic dim {} of input {} does not exist (the call has {} inputs{})", options.name, d.dim, d.input,
            inputs.size(),
            d.input < inputs.size() ? fmt::format(", input {} has rank {}", d.input, inputs[d.input].rank()) : ""));
      specs[d.input].shape[d.dim] = Size(d.symbol.empty() ? fmt::format("s{}", fresh++) : d.symbol);
      guards.inputs[d.input].sizes[d.dim] = std::nullopt;
    }
    return {specs, guards};
  }
};

CompiledFunction::CompiledFunction(BranchFn fn, CompileOptions options) : state_(std::make_shared<State>()) {
  state_->fn = std::move(fn);
  state_->options = std::move(options);
  if (logsWanted("recompiles")) state_->recompileLog = toStderr;
}

void CompiledFunction::setLogSink(LogSink sink) {
  std::lock_guard lock(state_->mutex);
  state_->recompileLog = sink;
  state_->warningLog = std::move(sink);
}

std::string CompiledFunction::checkGuards(const std::vector<Tensor>& inputs) const {
  std::lock_guard lock(state_->mutex);
  return state_->entries.empty() ? "" : firstFailure(state_->entries.front().guards, inputs);
}

CompileStats CompiledFunction::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

std::vector<Tensor> CompiledFunction::operator()(const std::vector<Tensor>& inputs) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  for (const State::Entry& e : s.entries)
    if (firstFailure(e.guards, inputs).empty()) {
      ++s.stats.cacheHits;
      Executable exe = e.executable;
      lock.unlock();  // Executables run concurrently; the cache stays locked only while it is looked at
      return exe.run(inputs);
    }
  for (const auto& p : s.pending)
    if (firstFailure(p->guards, inputs).empty()) {
      ++s.stats.cacheHits;
      std::shared_future<Executable> compiling = p->executable;
      lock.unlock();
      return compiling.get().run(inputs);  // the compile's error, if it failed
    }

  const std::string reason = s.entries.empty() ? "" : firstFailure(s.entries.front().guards, inputs);
  if (s.stats.compiles >= s.options.recompileLimit) {
    if (!s.warned && s.warningLog)
      s.warningLog(
          fmt::format("graphc: warning: {} hit the recompile limit ({}); calls that fit no compiled "
                      "entry run on the reference interpreter (last reason: {})",
                      s.options.name, s.options.recompileLimit, reason));
    s.warned = true;
    ++s.stats.fallbackCalls;
    auto [specs, guards] = s.specialise(inputs, /*dynamic=*/false);
    CompileOptions reference = s.options;
    reference.device = Device::Reference;
    lock.unlock();
    return compile(detail::traceList(s.fn, specs, s.options.name), reference).run(inputs);
  }

  if (!reason.empty()) {
    s.stats.recompileReasons.push_back(reason);
    if (s.recompileLog) s.recompileLog(fmt::format("recompiling {}: {}", s.options.name, reason));
  }
  auto [specs, guards] = s.specialise(inputs, /*dynamic=*/true);
  std::promise<Executable> promise;
  auto pending = std::make_shared<State::Pending>(State::Pending{guards, promise.get_future().share()});
  s.pending.push_back(pending);
  ++s.stats.compiles;  // counted when it starts, so concurrent callers see the limit
  lock.unlock();
  // Traced and compiled without the lock: other calls, cache hits and
  // other compiles go on meanwhile.
  std::optional<Executable> exe;
  std::exception_ptr error;
  try {
    exe = compile(detail::traceList(s.fn, specs, s.options.name), s.options);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  s.pending.erase(std::find(s.pending.begin(), s.pending.end(), pending));
  if (exe)
    s.entries.insert(s.entries.begin(), State::Entry{std::move(guards), *exe});
  else
    --s.stats.compiles;
  lock.unlock();
  if (error) {
    promise.set_exception(error);
    std::rethrow_exception(error);
  }
  promise.set_value(*exe);
  return exe->run(inputs);
}

}  // namespace graphc
