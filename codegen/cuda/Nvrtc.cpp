#include "codegen/cuda/Nvrtc.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <atomic>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nvrtc.h>
#include <unistd.h>

#include "ir/Diagnostics.h"

namespace graphc::codegen::cuda {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModuleName = "graphc_module.cu";
constexpr size_t kMemoryCacheEntries = 256;
constexpr char kMagic[8] = {'G', 'C', 'C', 'U', 'B', 'I', 'N', '1'};

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// Two FNV-1a hashes from different offset bases: a 128-bit key, as hex.
std::string hashKey(const std::string& text) {
  return fmt::format("{:016x}{:016x}", fnv1a(text, 0xcbf29ce484222325ull), fnv1a(text, 0x6c62272e07bb0142ull));
}

struct Header {
  char magic[8];
  char key[32];
  uint64_t size;
  uint64_t checksum;
};

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

std::optional<std::string> readEntry(const fs::path& file, const std::string& key) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  Header h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return std::nullopt;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || std::string(h.key, sizeof h.key) != key) return std::nullopt;
  if (h.size > (1ull << 31)) return std::nullopt;
  std::string payload(h.size, '\0');
  if (!in.read(payload.data(), static_cast<std::streamsize>(h.size)) || in.peek() != EOF) return std::nullopt;
  if (fnv1a(payload, 0xcbf29ce484222325ull) != h.checksum) return std::nullopt;
  return payload;
}

void writeEntry(const fs::path& file, const std::string& key, const std::string& payload) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return;
  // Unique per process and write: concurrent writers never share a temporary.
  static std::atomic<uint64_t> writes{0};
  const fs::path tmp = file.string() + fmt::format(".tmp.{}.{}.{}", getpid(), writes++,
                                                   std::chrono::steady_clock::now().time_since_epoch().count());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    std::memcpy(h.key, key.data(), sizeof h.key);
    h.size = payload.size();
    h.checksum = fnv1a(payload, 0xcbf29ce484222325ull);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
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
  return {"--gpu-architecture=" + target, "--std=c++17", "--fmad=false", "-default-device", "--extra-device-vectorization"};
}

std::string cacheDirectory() {
  if (const char* dir = std::getenv("GRAPHC_CACHE_DIR"); dir && *dir) return (fs::path(dir) / "cuda").string();
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "graphc" / "cuda").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache" / "graphc" / "cuda").string();
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
  const std::string key = hashKey(keyText);
  {
    std::lock_guard<std::mutex> lock(cacheMutex());
    if (auto it = memoryCache().find(key); it != memoryCache().end()) {
      CompiledModule m = it->second;
      m.from = CompiledModule::From::Memory;
      m.seconds = 0;
      return m;
    }
  }
  const fs::path file = fs::path(cacheDirectory()) / (key + (output == Output::Cubin ? ".cubin" : ".ptx"));
  CompiledModule m;
  if (std::optional<std::string> cached = readEntry(file, key)) {
    m.binary = std::move(*cached);
    m.arch = arch;
    m.from = CompiledModule::From::Disk;
  } else {
    m = runNvrtc(source, arch, output);
    writeEntry(file, key, m.binary);
  }
  std::lock_guard<std::mutex> lock(cacheMutex());
  // A bound on what one process keeps (the disk cache keeps the rest):
  // a long run over many graphs starts afresh rather than growing.
  if (memoryCache().size() >= kMemoryCacheEntries) memoryCache().clear();
  memoryCache()[key] = m;
  return m;
}

}  // namespace graphc::codegen::cuda
