#include "deploy/HostCpu.h"

#include <sstream>
#include <string_view>

namespace graphc::deploy {

namespace {

/// Whether the CPU has one of LLVM's x86 features; true for features this
/// table does not test (they are not ones codegen uses on its own).
bool hasFeature(std::string_view f) {
#if defined(__x86_64__)
  __builtin_cpu_init();
#define GRAPHC_FEATURE(llvm, gcc) \
  if (f == llvm) return __builtin_cpu_supports(gcc);
  GRAPHC_FEATURE("sse3", "sse3")
  GRAPHC_FEATURE("ssse3", "ssse3")
  GRAPHC_FEATURE("sse4.1", "sse4.1")
  GRAPHC_FEATURE("sse4.2", "sse4.2")
  GRAPHC_FEATURE("popcnt", "popcnt")
  GRAPHC_FEATURE("avx", "avx")
  GRAPHC_FEATURE("avx2", "avx2")
  GRAPHC_FEATURE("fma", "fma")
  GRAPHC_FEATURE("bmi", "bmi")
  GRAPHC_FEATURE("bmi2", "bmi2")
  GRAPHC_FEATURE("avx512f", "avx512f")
  GRAPHC_FEATURE("avx512vl", "avx512vl")
  GRAPHC_FEATURE("avx512bw", "avx512bw")
  GRAPHC_FEATURE("avx512dq", "avx512dq")
  GRAPHC_FEATURE("avx512cd", "avx512cd")
  GRAPHC_FEATURE("avx512ifma", "avx512ifma")
  GRAPHC_FEATURE("avx512vbmi", "avx512vbmi")
  GRAPHC_FEATURE("avx512vbmi2", "avx512vbmi2")
  GRAPHC_FEATURE("avx512vnni", "avx512vnni")
  GRAPHC_FEATURE("avx512bitalg", "avx512bitalg")
  GRAPHC_FEATURE("avx512vpopcntdq", "avx512vpopcntdq")
  GRAPHC_FEATURE("avx512bf16", "avx512bf16")
  GRAPHC_FEATURE("gfni", "gfni")
  GRAPHC_FEATURE("vpclmulqdq", "vpclmulqdq")
#undef GRAPHC_FEATURE
#endif
  (void)f;
  return true;
}

}  // namespace

std::string hostArchitecture() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

std::string missingCpuFeatures(const std::string& llvmFeatures) {
  std::string missing;
  std::stringstream in(llvmFeatures);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.size() < 2 || item[0] != '+') continue;
    const std::string name = item.substr(1);
    if (!hasFeature(name)) missing += (missing.empty() ? "" : ",") + name;
  }
  return missing;
}

}  // namespace graphc::deploy
