// graphc._graphc: the C++ API (frontend/api/Api.h) as a Python extension,
// a thin layer — Graph (parse, load, text, freeze, dynamic dims), compile,
// and Executable (call on arrays without copies, capture/replay, cancel
// through a CancelToken or Ctrl-C). The
// Python package (python/graphc) puts the user-facing signatures on top.
#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "Arrays.h"
#include "Errors.h"
#include "Interrupt.h"
#include "SampledBytes.h"
#include "frontend/api/Api.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace graphc::python {

namespace {

/// A flag another thread sets to stop the runs it was given to
/// (RunOptions::cancel); once cancelled it stays so.
struct CancelToken {
  std::atomic<bool> flag{false};
};

/// Runs `body` with RunOptions whose cancel flag is `token`'s (if any) and,
/// on Python's main thread, set by Ctrl-C too; a run stopped by Ctrl-C
/// raises KeyboardInterrupt, one stopped by its token graphc.Cancelled.
/// The GIL is released around `body`.
template <typename Body>
void runCancellable(CancelToken* token, Body&& body) {
  std::atomic<bool> local{false};
  RunOptions options;
  const bool interruptible = python::interruptible();
  if (token || interruptible) options.cancel = token ? &token->flag : &local;
  try {
    nb::gil_scoped_release released;
    InterruptScope scope(interruptible ? const_cast<std::atomic<bool>*>(options.cancel) : nullptr);
    body(options);
  } catch (const Cancelled&) {
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    throw;
  }
}

/// What a captured array was at capture(): replay() checks that it still
/// is (the same memory, shape and layout), since the caller may since have
/// resized or re-pointed it (resize_, set_, .data =) and freed the memory
/// the executable would write.
struct CapturedArray {
  nb::object array;
  const std::byte* data;
  std::vector<int64_t> shape;
  std::string name;
};

/// An Executable and the arrays a capture() bound, which must stay alive
/// (and in place) for replay().
struct PyExecutable {
  explicit PyExecutable(Executable e) : exe(std::move(e)) {
    for (const auto& p : exe.optimized().entry().body.params()) names.push_back(p->name);
  }

  Executable exe;
  std::vector<std::string> names;  // the inputs', in order: read by every call
  std::vector<CapturedArray> captured;

  /// Whether a result updates input `k` in place: graphc writes it through
  /// the caller's array, which must then be writable.
  bool updatesInput(size_t k) const {
    const ir::Graph& entry = exe.optimized().entry();
    return k < entry.body.params().size() && entry.updatingResult(entry.body.param(k)) >= 0;
  }

  /// The positional and keyword arguments in parameter order, as Tensors
  /// over the callers' memory; `cancel=` a CancelToken is the run's token.
  std::vector<Tensor> bind(const nb::args& args, const nb::kwargs& kwargs, Framework& framework, CancelToken*& token,
                           std::vector<nb::handle>* arrays = nullptr) const {
    std::vector<nb::handle> given(names.size());
    if (args.size() > names.size())
      throw nb::type_error(fmt::format("the graph takes {} inputs, {} were given", names.size(), args.size()).c_str());
    for (size_t k = 0; k < args.size(); ++k) given[k] = args[k];
    token = nullptr;
    for (auto [key, value] : kwargs) {
      const std::string name = nb::cast<std::string>(key);
      if (name == "cancel" && nb::isinstance<CancelToken>(value)) {
        token = nb::cast<CancelToken*>(value);
        continue;
      }
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) throw nb::type_error(fmt::format("the graph has no input named '{}'", name).c_str());
      size_t k = static_cast<size_t>(it - names.begin());
      if (given[k].is_valid()) throw nb::type_error(fmt::format("input '{}' given twice", name).c_str());
      given[k] = value;
    }
    framework = Framework::NumPy;
    std::vector<Tensor> inputs;
    inputs.reserve(names.size());
    for (size_t k = 0; k < names.size(); ++k) {
      if (!given[k].is_valid()) throw nb::type_error(fmt::format("input {} ('{}') is missing", k, names[k]).c_str());
      if (frameworkOf(given[k]) == Framework::PyTorch) framework = Framework::PyTorch;
      auto name = [&] { return fmt::format("input {} ('{}')", k, names[k]); };
      inputs.push_back(updatesInput(k) ? wrapWritableArray(given[k], name) : wrapArray(given[k], name));
    }
    if (arrays) *arrays = std::move(given);
    return inputs;
  }

  nb::list run(const nb::args& args, const nb::kwargs& kwargs) const {
    Framework framework;
    CancelToken* token;
    std::vector<nb::handle> arrays;
    std::vector<Tensor> inputs = bind(args, kwargs, framework, token, &arrays);
    std::vector<Tensor> outputs;
    runCancellable(token, [&](const RunOptions& options) { outputs = exe.run(inputs, options); });
    // A result that updates an input is the caller's array itself.
    const ir::Graph& entry = exe.optimized().entry();
    nb::list result;
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (const ir::Value* p = entry.updatedParam(k))
        result.append(arrays[static_cast<size_t>(p->index())]);
      else
        result.append(toArray(std::move(outputs[k]), framework));
    }
    return result;
  }

  void capture(const nb::sequence& inputs, const nb::sequence& outputs) {
    std::vector<CapturedArray> keep;
    auto tensors = [&](const nb::sequence& arrays, const char* what, auto written) {
      std::vector<Tensor> out;
      size_t k = 0;
      for (nb::handle a : arrays) {
        std::string name = fmt::format("{} {}", what, k);
        out.push_back(written(k++) ? wrapWritableArray(a, [&] { return name; }) : wrapArray(a, [&] { return name; }));
        keep.push_back({nb::borrow(a), out.back().data(), out.back().shape(), std::move(name)});
      }
      return out;
    };
    std::vector<Tensor> in = tensors(inputs, "input", [&](size_t k) { return updatesInput(k); }),
                        out = tensors(outputs, "output", [](size_t) { return true; });
    {
      nb::gil_scoped_release released;
      exe.capture(in, out);
    }
    captured = std::move(keep);
  }

  void replay(CancelToken* token) const {
    if (captured.empty()) throw nb::value_error("replay() before capture()");
    for (const CapturedArray& c : captured) {
      Tensor now = wrapArray(c.array, [&] { return "captured " + c.name; });
      if (now.data() != c.data || now.shape() != c.shape)
        throw nb::value_error(fmt::format("captured {} no longer holds the memory capture() bound (resized, or "
                                          "re-pointed by set_ or .data =); capture() again",
                                          c.name)
                                  .c_str());
    }
    runCancellable(token, [&](const RunOptions& options) { exe.replay(options); });
  }
};

CompileOptions optionsFrom(const std::string& device, const std::string& passes, const std::string& dumpDir,
                           bool printWeights, const std::string& arch, const std::string& matmul) {
  CompileOptions o;
  std::optional<Device> d = parseDevice(device);
  if (!d) throw nb::value_error(fmt::format("unknown device '{}' (reference, cpu, cuda)", device).c_str());
  o.device = *d;
  std::optional<MatmulImpl> m = codegen::parseMatmulImpl(matmul);
  if (!m) throw nb::value_error(fmt::format("unknown matmul '{}' (generated, cublaslt)", matmul).c_str());
  o.matmul = *m;
  o.passes = passes;
  o.dumpDir = dumpDir;
  o.printWeights = printWeights;
  o.arch = arch;
  return o;
}

/// (name, dtype, shape) of each parameter of the entry graph; a symbolic
/// size is its name.
nb::list signature(const Graph& g) {
  nb::list out;
  for (const auto& p : g.entry().body.params()) {
    nb::list shape;
    for (const ir::Dim& d : p->type.shape) shape.append(d.isStatic() ? nb::cast(d.size) : nb::cast(ir::toString(d)));
    out.append(nb::make_tuple(p->name, numpyDtypeName(p->type.dtype), nb::tuple(shape)));
  }
  return out;
}

}  // namespace

}  // namespace graphc::python

NB_MODULE(_graphc, m) {
  using namespace graphc;
  using namespace graphc::python;
  m.doc() = "graphc's C++ compiler; use the graphc package, which wraps this module";
  registerErrorTranslator();
  installInterruptHandler();
  // Executables live in torch's and Dynamo's caches until the interpreter
  // is torn down, after this module's types; that is not a leak.
  nb::set_leak_warnings(false);
  m.def("version", [] { return std::string(version()); });
  m.def("run_on_loaded_openmp_team", &runOnLoadedOpenMpTeam);

  nb::class_<Graph>(m, "Graph")
      .def_static("parse", &Graph::parse, "text"_a, "name"_a = "<string>")
      .def_static(
          "load", [](const std::string& path) { return Graph::load(path); }, "path"_a)
      .def_prop_ro("name", [](const Graph& g) { return g.entry().name; })
      .def_prop_ro("inputs", &signature)
      .def("text", &Graph::text)
      .def(
          "with_constants",
          [](const Graph& g, const std::map<std::string, nb::object>& values) {
            std::map<std::string, Tensor> tensors;
            for (const auto& [name, array] : values)
              tensors.emplace(name, wrapArray(array, [&] { return "constant '" + name + "'"; }));
            return g.withConstants(tensors);
          },
          "values"_a)
      .def("with_dynamic_dims", &Graph::withDynamicDims, "dims"_a)
      .def("with_input_updates", &Graph::withInputUpdates, "updates"_a)
      .def_prop_ro("input_updates", [](const Graph& g) {  // {result: parameter name}
        std::map<size_t, std::string> out;
        for (const ir::InputUpdate& u : g.entry().inputUpdates) out[u.result] = u.param->name;
        return out;
      });

  nb::class_<CancelToken>(m, "CancelToken")
      .def(nb::init<>())
      .def("cancel", [](CancelToken& t) { t.flag.store(true); })
      .def_prop_ro("cancelled", [](const CancelToken& t) { return t.flag.load(); });

  nb::class_<SampledBytes>(m, "SampledBytes")
      .def(nb::init<const nb::sequence&, int64_t>(), "arrays"_a, "per_array"_a)
      .def("unchanged", &SampledBytes::unchanged)
      .def("__len__", &SampledBytes::size);

  nb::class_<PyExecutable>(m, "Executable")
      .def("run", &PyExecutable::run)
      .def("__call__",
           [](const PyExecutable& e, const nb::args& args, const nb::kwargs& kwargs) -> nb::object {
             nb::list outputs = e.run(args, kwargs);
             if (outputs.size() == 1) return outputs[0];
             return nb::tuple(outputs);
           })
      .def("capture", &PyExecutable::capture, "inputs"_a, "outputs"_a)
      .def("replay", &PyExecutable::replay, "cancel"_a = nb::none())
      .def_prop_ro("input_names", [](const PyExecutable& e) { return e.names; })
      .def_prop_ro("device", [](const PyExecutable& e) { return std::string(deviceName(e.exe.device())); })
      .def_prop_ro("optimized", [](const PyExecutable& e) { return e.exe.optimized(); })
      .def_prop_ro("dump_dir", [](const PyExecutable& e) { return e.exe.dumpDir(); })
      .def("describe", [](const PyExecutable& e) { return e.exe.describe(); })
      .def("report", [](const PyExecutable& e) {
        std::vector<std::tuple<std::string, double, bool>> stages;
        for (const auto& s : e.exe.report().stages) stages.emplace_back(s.name, s.seconds, s.detail);
        return stages;
      });

  m.def(
      "compile",
      [](const Graph& graph, const std::string& device, const std::string& passes, const std::string& dumpDir,
         bool printWeights, const std::string& arch, const std::string& matmul, CancelToken* token) {
        CompileOptions options = optionsFrom(device, passes, dumpDir, printWeights, arch, matmul);
        // A compile stops as a run does: through its token, or Ctrl-C on
        // the main thread, between passes and kernels.
        std::optional<PyExecutable> out;
        runCancellable(token, [&](const RunOptions& run) {
          options.cancel = run.cancel;
          out.emplace(compile(graph, options));
        });
        return std::move(*out);
      },
      "graph"_a, "device"_a = "cpu", "passes"_a = "", "dump_dir"_a = "", "print_weights"_a = false, "arch"_a = "",
      "matmul"_a = "generated", "cancel"_a.none() = nb::none());
}
