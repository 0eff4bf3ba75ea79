#include "codegen/DiskCache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "ir/Diagnostics.h"
#include "runtime/FileIO.h"

namespace graphc::codegen {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'G', 'C', 'C', 'A', 'C', 'H', 'E', '1'};

struct Header {
  char magic[8];
  char key[32];
  uint64_t size;
  uint64_t checksum;
};

uint64_t fnv1a(std::string_view s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void noteOnce(const std::string& why) {
  static std::atomic<bool> noted{false};
  if (!noted.exchange(true))
    std::fprintf(stderr, "graphc: note: compiled code is not cached on disk: %s\n", why.c_str());
}

std::optional<fs::path> cacheRoot(std::string& whyNot) {
  if (const char* dir = std::getenv("GRAPHC_CACHE_DIR"); dir && *dir) return fs::path(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "graphc";
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    const passwd* user = ::getpwuid(::geteuid());  // as Python's expanduser does without HOME
    home = user && user->pw_dir && *user->pw_dir ? user->pw_dir : nullptr;
  }
  if (!home) {
    whyNot = "no home directory (set GRAPHC_CACHE_DIR to enable it)";
    return std::nullopt;
  }
  return fs::path(home) / ".cache" / "graphc";
}

/// Whether `dir` is a directory of this user's that only it may write;
/// else why not.
std::string unsafeBecause(const fs::path& dir) {
  struct stat info{};
  if (::stat(dir.c_str(), &info) != 0) return fmt::format("{}: {}", dir.string(), std::strerror(errno));
  if (!S_ISDIR(info.st_mode)) return fmt::format("{} is not a directory", dir.string());
  if (info.st_uid != ::geteuid()) return fmt::format("{} belongs to another user", dir.string());
  if (info.st_mode & (S_IWGRP | S_IWOTH)) return fmt::format("{} is writable by other users", dir.string());
  return "";
}

/// Creates the missing directories of `dir`, each 0700.
void createPrivate(const fs::path& dir) {
  fs::path partial;
  for (const fs::path& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) return;  // reported by the check that follows
  }
}

}  // namespace

std::optional<fs::path> cacheDirectory(std::string_view kind) {
  std::string whyNot;
  const std::optional<fs::path> root = cacheRoot(whyNot);
  if (!root) {
    noteOnce(whyNot);
    return std::nullopt;
  }
  const fs::path dir = *root / kind;
  createPrivate(dir);
  for (const fs::path& d : {*root, dir})
    if (std::string why = unsafeBecause(d); !why.empty()) {
      noteOnce(why);
      return std::nullopt;
    }
  return dir;
}

std::string cacheKey(std::string_view text) {
  return fmt::format("{:016x}{:016x}", fnv1a(text, 0xcbf29ce484222325ull), fnv1a(text, 0x6c62272e07bb0142ull));
}

std::optional<std::string> readCacheEntry(const fs::path& file, std::string_view key) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close{fd};
  struct stat info{};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid() ||
      (info.st_mode & (S_IWGRP | S_IWOTH)))
    return std::nullopt;
  Header h{};
  if (static_cast<size_t>(info.st_size) < sizeof h || ::read(fd, &h, sizeof h) != static_cast<ssize_t>(sizeof h))
    return std::nullopt;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || std::string_view(h.key, sizeof h.key) != key)
    return std::nullopt;
  // The header's size must be the file's, checked before allocating.
  if (h.size != static_cast<uint64_t>(info.st_size) - sizeof h) return std::nullopt;
  std::string payload(static_cast<size_t>(h.size), '\0');
  for (size_t done = 0; done < payload.size();) {
    const ssize_t n = ::read(fd, payload.data() + done, payload.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    done += static_cast<size_t>(n);
  }
  if (fnv1a(payload, 0xcbf29ce484222325ull) != h.checksum) return std::nullopt;
  ::futimens(fd, nullptr);  // used now: the last an eviction removes
  return payload;
}

void writeCacheEntry(const fs::path& file, std::string_view key, std::string_view payload) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  std::memcpy(h.key, key.data(), std::min(key.size(), sizeof h.key));
  h.size = payload.size();
  h.checksum = fnv1a(payload, 0xcbf29ce484222325ull);
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  bytes += payload;
  try {
    runtime::writeFileAtomically(file, bytes, 0600);
  } catch (const ir::Error&) {
    // An unwritable cache costs a recompile next time, nothing more.
  }
  // A scan of the folder now and then, not per write: the first write of
  // the process and every 64th after it.
  static std::atomic<uint64_t> writes{0};
  if (writes.fetch_add(1) % 64 != 0) return;
  if (const uint64_t bound = cacheSizeBound(); bound > 0) pruneCache(file.parent_path(), bound, bound - bound / 10);
}

uint64_t cacheSizeBound() {
  constexpr uint64_t kDefault = uint64_t{1} << 30;
  const char* text = std::getenv("GRAPHC_CACHE_MAX_SIZE");
  if (!text || !*text) return kDefault;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  const std::string_view unit(end);
  const uint64_t scale = unit.empty()                 ? 1
                         : unit == "K" || unit == "k" ? uint64_t{1} << 10
                         : unit == "M" || unit == "m" ? uint64_t{1} << 20
                         : unit == "G" || unit == "g" ? uint64_t{1} << 30
                                                      : 0;
  if (errno != 0 || end == text || scale == 0 || *text == '-' || value > UINT64_MAX / scale) {
    static std::atomic<bool> noted{false};
    if (!noted.exchange(true))
      std::fprintf(stderr,
                   "graphc: note: GRAPHC_CACHE_MAX_SIZE='%s' is not a size (a number, with K, M or G); "
                   "the cache keeps its default bound of 1G\n",
                   text);
    return kDefault;
  }
  return value * scale;
}

CacheUsage pruneCache(const fs::path& dir, uint64_t over, uint64_t keep) {
  struct Entry {
    fs::path path;
    uint64_t bytes;
    struct timespec used;
  };
  std::vector<Entry> entries;
  CacheUsage usage;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    struct stat info{};
    // Entries are this user's regular files; a write's temporary (".name.tmp...") is not one yet.
    if (name.empty() || name[0] == '.' || ::lstat(e.path().c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
        info.st_uid != ::geteuid())
      continue;
    entries.push_back({e.path(), static_cast<uint64_t>(info.st_size), info.st_mtim});
    usage.entries += 1;
    usage.bytes += static_cast<uint64_t>(info.st_size);
  }
  if (usage.bytes <= over) return usage;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec) < std::tie(b.used.tv_sec, b.used.tv_nsec);
  });
  for (const Entry& e : entries) {
    if (usage.bytes <= keep && keep > 0) break;
    if (!fs::remove(e.path, ec)) continue;  // gone already, or not ours to remove
    usage.entries -= 1;
    usage.bytes -= e.bytes;
    usage.removed += 1;
    usage.removedBytes += e.bytes;
  }
  return usage;
}

}  // namespace graphc::codegen
