#include "deploy/HostCpu.h"

#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace graphc::deploy {

namespace {

#if defined(__x86_64__)
/// Bit `bit` of register `reg` (0 EAX, 1 EBX, 2 ECX, 3 EDX) of CPUID leaf
/// `leaf`, subleaf `sub`; false when the leaf does not exist.
bool cpuidBit(unsigned leaf, unsigned sub, int reg, int bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1u;
}

std::optional<bool> x86Feature(std::string_view f) {
  __builtin_cpu_init();
  // Tested by the compiler's CPU detection, under LLVM's names.
#define GRAPHC_FEATURE(name) \
  if (f == name) return __builtin_cpu_supports(name) != 0;
  GRAPHC_FEATURE("sse3")
  GRAPHC_FEATURE("ssse3")
  GRAPHC_FEATURE("sse4.1")
  GRAPHC_FEATURE("sse4.2")
  GRAPHC_FEATURE("sse4a")
  GRAPHC_FEATURE("popcnt")
  GRAPHC_FEATURE("lzcnt")
  GRAPHC_FEATURE("movbe")
  GRAPHC_FEATURE("f16c")
  GRAPHC_FEATURE("fma")
  GRAPHC_FEATURE("fma4")
  GRAPHC_FEATURE("xop")
  GRAPHC_FEATURE("tbm")
  GRAPHC_FEATURE("lwp")
  GRAPHC_FEATURE("bmi")
  GRAPHC_FEATURE("bmi2")
  GRAPHC_FEATURE("adx")
  GRAPHC_FEATURE("aes")
  GRAPHC_FEATURE("pclmul")
  GRAPHC_FEATURE("sha")
  GRAPHC_FEATURE("vaes")
  GRAPHC_FEATURE("vpclmulqdq")
  GRAPHC_FEATURE("gfni")
  GRAPHC_FEATURE("avx")
  GRAPHC_FEATURE("avx2")
  GRAPHC_FEATURE("avxvnni")
  GRAPHC_FEATURE("avx512f")
  GRAPHC_FEATURE("avx512vl")
  GRAPHC_FEATURE("avx512bw")
  GRAPHC_FEATURE("avx512dq")
  GRAPHC_FEATURE("avx512cd")
  GRAPHC_FEATURE("avx512er")
  GRAPHC_FEATURE("avx512pf")
  GRAPHC_FEATURE("avx512ifma")
  GRAPHC_FEATURE("avx512vbmi")
  GRAPHC_FEATURE("avx512vbmi2")
  GRAPHC_FEATURE("avx512vnni")
  GRAPHC_FEATURE("avx512bitalg")
  GRAPHC_FEATURE("avx512vpopcntdq")
  GRAPHC_FEATURE("avx512bf16")
  GRAPHC_FEATURE("avx512fp16")
  GRAPHC_FEATURE("avx512vp2intersect")
  GRAPHC_FEATURE("avx5124vnniw")
  GRAPHC_FEATURE("avx5124fmaps")
  GRAPHC_FEATURE("amx-tile")
  GRAPHC_FEATURE("amx-int8")
  GRAPHC_FEATURE("amx-bf16")
#undef GRAPHC_FEATURE
  // Tested through CPUID, which the compiler's detection has no name for.
  if (f == "cx16") return cpuidBit(1, 0, 2, 13);
  if (f == "sahf") return cpuidBit(0x80000001, 0, 2, 0);
  // Parts of features above, under LLVM's own names.
  if (f == "crc32") return x86Feature("sse4.2");
  if (f == "evex512") return x86Feature("avx512f");
  if (f == "avx10.1-256" || f == "avx10.1-512") {  // AVX10.1 is Sapphire Rapids' AVX-512
    for (std::string_view part :
         {"avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512cd", "avx512ifma", "avx512vbmi", "avx512vbmi2",
          "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16", "avx512fp16", "vpclmulqdq", "gfni", "vaes"})
      if (!*x86Feature(part)) return false;
    return true;
  }
  // What every x86-64 CPU has.
  for (std::string_view baseline : {"64bit", "x87", "cx8", "cmov", "fxsr", "mmx", "sse", "sse2", "nopl"})
    if (f == baseline) return true;
  // Instructions LLVM emits only through their intrinsics (system state,
  // random numbers, cache and TLB control, transactions, messaging), which
  // graphc's kernels do not call.
  for (std::string_view intrinsicOnly :
       {"xsave",     "xsaveopt",    "xsavec",     "xsaves",    "rdrnd",     "rdseed",   "rdpid",    "rdpru",
        "fsgsbase",  "invpcid",     "clflushopt", "clwb",      "cldemote",  "clzero",   "wbnoinvd", "prfchw",
        "prefetchi", "prefetchwt1", "movdiri",    "movdir64b", "serialize", "tsxldtrk", "rtm",      "hreset",
        "uintr",     "waitpkg",     "enqcmd",     "ptwrite",   "pku",       "shstk",    "sgx",      "mwaitx",
        "kl",        "widekl",      "pconfig",    "cmpccxadd", "usermsr"})
    if (f == intrinsicOnly) return true;
  return std::nullopt;
}
#endif

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

std::optional<bool> hostHasCpuFeature(std::string_view name) {
#if defined(__x86_64__)
  return x86Feature(name);
#else
  (void)name;
  return std::nullopt;  // no table for this architecture: every feature fails closed
#endif
}

CpuFeatureCheck checkCpuFeatures(const std::string& llvmFeatures) {
  CpuFeatureCheck check;
  std::stringstream in(llvmFeatures);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.size() < 2 || item[0] != '+') continue;
    const std::string name = item.substr(1);
    const std::optional<bool> has = hostHasCpuFeature(name);
    if (!has)
      check.unknown.push_back(name);
    else if (!*has)
      check.missing.push_back(name);
  }
  return check;
}

}  // namespace graphc::deploy
