// graphc cache: the on-disk cache of compiled code (codegen/DiskCache.h) —
// where each kind's folder is, its entries and their size against the
// bound; --prune removes the least recently used entries beyond the bound,
// --clear every entry.
#include <cstdio>

#include <fmt/format.h>

#include "codegen/DiskCache.h"
#include "tools/graphc/Commands.h"

namespace graphc::tools {

namespace {

std::string sizeText(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= (uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

}  // namespace

int cacheCommand(const CacheCommandOptions& options) {
  return withErrorsReported([&] {
    const uint64_t bound = codegen::cacheSizeBound();
    for (const char* kind : {"cpu", "cuda"}) {
      const std::optional<std::filesystem::path> dir = codegen::cacheDirectory(kind);
      if (!dir) return 1;  // the reason is on stderr
      // One scan: measured only, pruned to the bound, or emptied.
      const uint64_t keep = options.clear ? 0 : options.prune && bound > 0 ? bound : UINT64_MAX;
      const codegen::CacheUsage usage = codegen::pruneCache(*dir, keep, keep);
      std::printf("%s\n", fmt::format("{}: {}: {} entries, {} (bound {}){}", kind, dir->string(), usage.entries,
                                      sizeText(usage.bytes), bound > 0 ? sizeText(bound) : "none",
                                      usage.removed ? fmt::format("; removed {} entries, {}", usage.removed,
                                                                  sizeText(usage.removedBytes))
                                                    : "")
                              .c_str());
    }
    return 0;
  });
}

}  // namespace graphc::tools
