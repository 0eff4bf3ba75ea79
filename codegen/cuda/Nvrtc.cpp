#include "codegen/cuda/Nvrtc.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nvrtc.h>

#include "codegen/DiskCache.h"
#include "ir/Diagnostics.h"

namespace graphc::codegen::cuda {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModuleName = "graphc_module.cu";
constexpr size_t kMemoryCacheEntries = 256;

void checkNvrtc(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw ir::Error(fmt::format("nvrtc: {}: {}", what, nvrtcGetErrorString(r)));
}

/// NVRTC's log with the generated line each "graphc_module.cu(N): error"
/// points at, so that a codegen bug reads like a compiler error.
std::string annotatedLog(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  std::istringstream logIn(log);
  const std::string prefix = std::string(kModuleName) + "(";
  for (std::string l; std::getline(logIn, l);) {
    if (l.empty()) continue;
    out += l + "\n";
    if (l.rfind(prefix, 0) != 0) continue;
    const size_t n = std::strtoul(l.c_str() + prefix.size(), nullptr, 10);
    if (n >= 1 && n <= lines.size()) out += fmt::format("  generated line {}: {}\n", n, lines[n - 1]);
  }
  return out;
}

std::mutex& cacheMutex() {
  static std::mutex m;
  return m;
}

std::unordered_map<std::string, CompiledModule>& memoryCache() {
  static std::unordered_map<std::string, CompiledModule> cache;
  return cache;
}

CompiledModule runNvrtc(const std::string& source, const std::string& arch, Output output) {
  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram program;
  checkNvrtc(nvrtcCreateProgram(&program, source.c_str(), kModuleName, 0, nullptr, nullptr), "create program");
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&program};
  const std::vector<std::string> options = nvrtcOptions(arch, output);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    if (!log.empty() && log.back() == '\0') log.pop_back();
    throw ir::Error(fmt::format("nvrtc could not compile the generated module for {} ({}):\n{}", arch,
                                nvrtcGetErrorString(r), annotatedLog(log, source)));
  }
  CompiledModule m;
  m.arch = arch;
  size_t size = 0;
  if (output == Output::Cubin) {
    checkNvrtc(nvrtcGetCUBINSize(program, &size), "cubin size");
    m.binary.resize(size);
    checkNvrtc(nvrtcGetCUBIN(program, m.binary.data()), "cubin");
  } else {
    checkNvrtc(nvrtcGetPTXSize(program, &size), "ptx size");
    m.binary.resize(size);
    checkNvrtc(nvrtcGetPTX(program, m.binary.data()), "ptx");
    if (!m.binary.empty() && m.binary.back() == '\0') m.binary.pop_back();
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace

std::string nvrtcVersion() {
  int major = 0, minor = 0;
  checkNvrtc(::nvrtcVersion(&major, &minor), "version");
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> nvrtcOptions(const std::string& arch, Output output) {
  // Real architectures give SASS (a cubin); PTX comes from the virtual one.
  const std::string target = output == Output::Cubin ? arch : "compute_" + arch.substr(3);
  return {"--gpu-architecture=" + target, "--std=c++17", "--fmad=false", "-default-device",
          "--extra-device-vectorization"};
}

void clearMemoryCache() {
  std::lock_guard<std::mutex> lock(cacheMutex());
  memoryCache().clear();
}

CompiledModule compileModule(const std::string& source, const std::string& arch, Output output) {
  if (arch.rfind("sm_", 0) != 0 || std::atoi(arch.c_str() + 3) < 80)
    throw ir::Error(fmt::format("cuda: architecture '{}' is not supported (graphc needs sm_80 or newer)", arch));
  std::string keyText = source;
  keyText += '\0';
  for (const std::string& o : nvrtcOptions(arch, output)) keyText += o + '\0';
  keyText += nvrtcVersion();
  const std::string key = cacheKey(keyText);
  {
    std::lock_guard<std::mutex> lock(cacheMutex());
    if (auto it = memoryCache().find(key); it != memoryCache().end()) {
      CompiledModule m = it->second;
      m.from = CompiledModule::From::Memory;
      m.seconds = 0;
      return m;
    }
  }
  const std::optional<fs::path> dir = cacheDirectory("cuda");
  const fs::path file = dir ? *dir / (key + (output == Output::Cubin ? ".cubin" : ".ptx")) : fs::path();
  CompiledModule m;
  if (std::optional<std::string> cached = dir ? readCacheEntry(file, key) : std::nullopt) {
    m.binary = std::move(*cached);
    m.arch = arch;
    m.from = CompiledModule::From::Disk;
  } else {
    m = runNvrtc(source, arch, output);
    if (dir) writeCacheEntry(file, key, m.binary);
  }
  std::lock_guard<std::mutex> lock(cacheMutex());
  // A bound on what one process keeps (the disk cache keeps the rest):
  // a long run over many graphs starts afresh rather than growing.
  if (memoryCache().size() >= kMemoryCacheEntries) memoryCache().clear();
  memoryCache()[key] = m;
  return m;
}

}  // namespace graphc::codegen::cuda
