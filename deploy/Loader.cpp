#include "deploy/Loader.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/StepPlan.h"
#include "codegen/cpu/CpuExecutable.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "deploy/CudaPackages.h"
#include "deploy/GraphJson.h"
#include "deploy/HostCpu.h"
#include "deploy/Package.h"
#include "deploy/PlanJson.h"
#include "deploy/Weights.h"
#include "ir/Diagnostics.h"
#include "runtime/Safetensors.h"

namespace graphc::deploy {

namespace {

using nlohmann::json;

json parseJson(const Package& p, const std::string& entry) {
  std::span<const std::byte> bytes = p.entry(entry);
  const auto* text = reinterpret_cast<const char*>(bytes.data());
  json j = json::parse(text, text + bytes.size(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ir::Error(fmt::format("{}: {} is not valid JSON", p.name(), entry));
  return j;
}

std::string manifestText(const json& manifest, const char* object, const char* field) {
  if (!manifest.contains(object) || !manifest[object].is_object() || !manifest[object].contains(field) ||
      !manifest[object][field].is_string())
    return "";
  return manifest[object][field].get<std::string>();
}

std::string manifestString(const json& manifest, const char* field) {
  return manifest.contains(field) && manifest[field].is_string() ? manifest[field].get<std::string>() : "?";
}

/// The package's device, after checking that this machine runs its code:
/// for cpu, the architecture and CPU extensions (a cuda package's GPU is
/// checked when its module loads).
codegen::Device checkTarget(const Package& p) {
  const json& m = p.manifest();
  const std::optional<codegen::Device> device = m.contains("device") && m["device"].is_string()
                                                    ? codegen::parseDevice(m["device"].get<std::string>())
                                                    : std::nullopt;
  if (!device || *device == codegen::Device::Reference)
    throw ir::Error(fmt::format("{}: a package for device {} (this runtime runs cpu and cuda packages)", p.name(),
                                m.contains("device") ? m["device"].dump() : "?"));
  if (*device == codegen::Device::Cuda) return *device;
  const std::string triple = manifestText(m, "target", "triple");
  if (triple.rfind(hostArchitecture(), 0) != 0)
    throw ir::Error(fmt::format("{}: compiled for {}, this machine is {}", p.name(), triple.empty() ? "?" : triple,
                                hostArchitecture()));
  const CpuFeatureCheck cpu = checkCpuFeatures(manifestText(m, "target", "features"));
  if (!cpu.missing.empty())
    throw ir::Error(fmt::format("{}: compiled for a {} CPU; this CPU lacks {}", p.name(),
                                manifestText(m, "target", "cpu"), fmt::join(cpu.missing, ",")));
  if (!cpu.unknown.empty())
    throw ir::Error(
        fmt::format("{}: compiled for a {} CPU with {}, which this loader cannot check on this CPU "
                    "(refused rather than risk an illegal instruction)",
                    p.name(), manifestText(m, "target", "cpu"), fmt::join(cpu.unknown, ",")));
  return *device;
}

/// The kernels' shared object, opened from memory: written to an anonymous
/// memfd and dlopened through /proc/self/fd/N, so nothing touches the disk.
/// The memfd stays open until the library is closed: dlopen returns an
/// already loaded library whose name matches, so a closed descriptor's
/// number, reused by the next package, would hand it this one's kernels.
std::shared_ptr<void> openKernelLibrary(const Package& p) {
  std::span<const std::byte> library = p.entry("cpu/kernels.so");
  const int fd = memfd_create("graphc-kernels", MFD_CLOEXEC);
  if (fd < 0) throw ir::Error(fmt::format("{}: cannot create a memfd for the kernels", p.name()));
  size_t written = 0;
  while (written < library.size()) {
    const ssize_t n = write(fd, library.data() + written, library.size() - written);
    if (n <= 0) {
      close(fd);
      throw ir::Error(fmt::format("{}: cannot write the kernels to a memfd", p.name()));
    }
    written += static_cast<size_t>(n);
  }
  void* handle = dlopen(fmt::format("/proc/self/fd/{}", fd).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    close(fd);
    throw ir::Error(fmt::format("{}: cannot load cpu/kernels.so: {}", p.name(), why ? why : "?"));
  }
  return std::shared_ptr<void>(handle, [fd](void* h) {
    dlclose(h);
    close(fd);
  });
}

class OwningExecutable final : public runtime::Executable {
 public:
  explicit OwningExecutable(LoadedPackage p) : p_(std::move(p)) {}
  ~OwningExecutable() override { p_.executable.reset(); }
  std::vector<runtime::Tensor> run(const std::vector<runtime::Tensor>& inputs,
                                   const runtime::RunOptions& options) override {
    return p_.executable->run(inputs, options);
  }
  void capture(const std::vector<runtime::Tensor>& inputs, const std::vector<runtime::Tensor>& outputs) override {
    p_.executable->capture(inputs, outputs);
  }
  void replay(const runtime::RunOptions& options) override { p_.executable->replay(options); }
  std::string describe() const override { return p_.executable->describe(); }

 private:
  LoadedPackage p_;
};

/// A cuda package's Executable, made by the runtime's cuda module.
std::unique_ptr<runtime::Executable> loadCudaCode(const Package& p, const ir::Graph& g,
                                                  const codegen::LoweredKernels& lowered) {
  CudaPackageCode code;
  code.name = p.name();
  for (const std::string& entry : p.entryNames())
    if (entry.starts_with("cuda/")) code.files[entry] = p.entry(entry);
  if (p.manifest().contains("target") && p.manifest()["target"].is_object())
    for (const auto& [key, value] : p.manifest()["target"].items())
      if (value.is_string()) code.target[key] = value.get<std::string>();
  const CudaPackageLoader loader = [&] {
    try {
      return cudaPackageLoader();
    } catch (const ir::Error& e) {
      throw ir::Error(fmt::format("{}: {}", p.name(), e.what()));
    }
  }();
  return loader(g, lowered, code);
}

/// A cpu package's Executable over its kernels' shared object.
std::unique_ptr<runtime::Executable> loadCpuCode(const Package& p, const ir::Graph& g,
                                                 const codegen::LoweredKernels& lowered) {
  std::shared_ptr<void> library = openKernelLibrary(p);
  std::vector<std::shared_ptr<const codegen::cpu::CompiledKernel>> kernels;
  for (size_t i = 0; i < lowered.kernels.size(); ++i) {
    auto k = std::make_shared<codegen::cpu::CompiledKernel>();
    const std::string symbol = codegen::cpu::exportedKernelSymbol(i);
    k->address = dlsym(library.get(), symbol.c_str());
    if (!k->address) throw ir::Error(fmt::format("{}: cpu/kernels.so lacks {}", p.name(), symbol));
    k->code = library;
    k->signature = codegen::cpu::signatureOf(*lowered.kernels[i]);
    k->from = codegen::cpu::CompiledKernel::From::Package;
    kernels.push_back(std::move(k));
  }
  try {
    return codegen::cpu::makeExecutable(g, lowered, std::move(kernels));
  } catch (const ir::Error& e) {
    throw ir::Error(fmt::format("{}: {}", p.name(), e.what()));
  }
}

LoadedPackage load(const Package& p) {
  const codegen::Device device = checkTarget(p);
  const runtime::SafetensorsFile weights = [&] {
    try {
      return runtime::parseSafetensors(p.entry("weights.safetensors"));
    } catch (const ir::Error& e) {
      throw ir::Error(fmt::format("{}: weights.safetensors: {}", p.name(), e.what()));
    }
  }();
  LoadedPackage out;
  out.manifest = p.manifest();
  out.device = device;
  try {
    out.module = graphFromJson(parseJson(p, "graph.json"), weightsReader(weights, p.storage()));
  } catch (const ir::Error& e) {
    throw ir::Error(fmt::format("{}: {}", p.name(), e.what()));
  }
  const ir::Graph& g = *out.module->entry();

  // The plan and the kernels this runtime makes of the graph must be the
  // ones the exporter compiled.
  codegen::LoweredKernels lowered;
  json plan;
  try {
    // As the exporting backend lowered them (Backend::lowerOptions).
    lowered = codegen::lowerKernels(
        g, device == codegen::Device::Cpu ? codegen::cpu::cpuLowerOptions() : codegen::kernel::LowerOptions{});
    plan = planToJson(*codegen::planGraph(g, lowered.kernels, lowered.position));
  } catch (const ir::Error& e) {
    throw ir::Error(fmt::format("{}: the graph does not plan: {}", p.name(), e.what()));
  }
  const json stored = parseJson(p, "plan.json");
  if (!stored.is_object() || !stored.contains("plan") || stored["plan"] != plan)
    throw ir::Error(
        fmt::format("{}: its step plan is not the one this runtime makes of its graph (made by graphc {}; "
                    "export it again with this version)",
                    p.name(), manifestString(p.manifest(), "graphc_version")));
  if (!stored.contains("kernels") || stored["kernels"] != kernelTable(lowered))
    throw ir::Error(fmt::format("{}: its kernel table does not match the kernels of its graph", p.name()));

  out.executable = device == codegen::Device::Cuda ? loadCudaCode(p, g, lowered) : loadCpuCode(p, g, lowered);
  return out;
}

/// load(), with any JSON access a check missed reported as the package's
/// error rather than escaping as nlohmann's exception.
LoadedPackage loadChecked(const Package& p) {
  try {
    return load(p);
  } catch (const json::exception& e) {
    throw ir::Error(fmt::format("{}: malformed JSON: {}", p.name(), e.what()));
  }
}

}  // namespace

LoadedPackage loadPackage(const std::filesystem::path& path) { return loadChecked(Package::read(path)); }

LoadedPackage loadPackage(std::span<const std::byte> bytes, const std::string& name) {
  return loadChecked(Package::fromBytes(bytes, name));
}

std::unique_ptr<runtime::Executable> openPackage(const std::filesystem::path& path) {
  return std::make_unique<OwningExecutable>(loadPackage(path));
}

}  // namespace graphc::deploy
