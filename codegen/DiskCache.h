// The on-disk cache of compiled code that both backends share (NVRTC's
// cubins under cuda/, LLVM's objects under cpu/). A cache entry is loaded
// and run as code, so the directory must be the user's own:
//
//   root   $GRAPHC_CACHE_DIR, else $XDG_CACHE_HOME/graphc, else
//          ~/.cache/graphc (the home from $HOME, else the password
//          database). Never a shared fallback such as /tmp: with no home
//          there is no disk cache.
//   dirs   created 0700; a directory not owned by the user, or writable by
//          group or others, is refused (as ccache and pip refuse them), and
//          the cache is off for the process, with one note on stderr.
//   bound  the entries of each kind take at most $GRAPHC_CACHE_MAX_SIZE
//          bytes (a number, with K, M or G for KiB, MiB, GiB; 0 for no
//          bound), 1 GiB when unset. A read marks its entry used (its
//          modification time); a write, now and then (the first of a
//          process and every 64th), removes the least recently used
//          entries beyond the bound, down to 90% of it. `graphc cache`
//          shows the folders, `--prune` applies the bound, `--clear`
//          removes every entry.
//   entry  a header (magic, key, payload size, checksum) then the payload;
//          written 0600 to a temporary file and renamed into place. A read
//          checks the header's size against the file's before allocating,
//          and refuses a symlink, a file of another owner or one others may
//          write; an entry that does not match is treated as a miss (and is
//          rewritten by the caller).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace graphc::codegen {

/// The cache directory for one kind of entry ("cuda", "cpu"), created if
/// needed; nullopt when no safe directory is available (the reason is
/// noted once on stderr).
std::optional<std::filesystem::path> cacheDirectory(std::string_view kind);

/// A 128-bit hash of `text`, as 32 hex digits: the name of an entry.
std::string cacheKey(std::string_view text);

/// The payload stored under `key` in `file`, or nullopt (missing, corrupt,
/// unsafe, or written for another key).
std::optional<std::string> readCacheEntry(const std::filesystem::path& file, std::string_view key);

/// Stores `payload` under `key`; a failure only leaves the cache without
/// the entry. Now and then prunes the folder to cacheSizeBound().
void writeCacheEntry(const std::filesystem::path& file, std::string_view key, std::string_view payload);

/// The bound on each kind's entries, in bytes ($GRAPHC_CACHE_MAX_SIZE, else
/// 1 GiB; 0: none). An unreadable value is the default, with a note.
uint64_t cacheSizeBound();

/// A cache folder's entries, and what a prune removed of them.
struct CacheUsage {
  int64_t entries = 0;
  uint64_t bytes = 0;
  int64_t removed = 0;
  uint64_t removedBytes = 0;
};

/// When the entries of `dir` take more than `over` bytes, removes the
/// least recently used until the rest take at most `keep` (≤ over; 0:
/// every entry); what is left, and what went. One scan of the folder
/// (`over` = UINT64_MAX only measures it).
CacheUsage pruneCache(const std::filesystem::path& dir, uint64_t over, uint64_t keep);

}  // namespace graphc::codegen
