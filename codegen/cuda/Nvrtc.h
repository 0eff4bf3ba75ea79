// NVRTC: a generated module's CUDA C++ → cubin for one architecture (or
// PTX for `graphc compile --emit=ptx`). No GPU is needed, so CI compiles
// every generated kernel. Results are cached in memory (up to 256 modules
// per process) and on disk:
//
//   key    a 128-bit hash of the source, the options and NVRTC's version
//   file   <cache>/cuda/<key>.cubin in the user's private cache directory
//          (codegen/DiskCache.h: where it is, how entries are checked and
//          written); an entry whose header or checksum does not match is
//          recompiled and rewritten. Without a safe cache directory there
//          is no disk cache.
#pragma once

#include <string>
#include <vector>

namespace graphc::codegen::cuda {

enum class Output { Cubin, Ptx };

struct CompiledModule {
  std::string binary;  // cubin bytes, or PTX text
  std::string arch;    // sm_80, sm_90
  double seconds = 0;  // NVRTC's time (0 when cached)
  enum class From { Nvrtc, Memory, Disk } from = From::Nvrtc;
};

/// "13.0".
std::string nvrtcVersion();

/// The NVRTC options graphc compiles with, for `arch` ("sm_80").
std::vector<std::string> nvrtcOptions(const std::string& arch, Output output);

/// Compiles `source` for `arch` (sm_80 or newer). Throws ir::Error with
/// NVRTC's log, each error followed by the generated line it points at.
CompiledModule compileModule(const std::string& source, const std::string& arch, Output output = Output::Cubin);

/// Forgets the in-memory cache (tests use it to reach the disk cache).
void clearMemoryCache();

}  // namespace graphc::codegen::cuda
