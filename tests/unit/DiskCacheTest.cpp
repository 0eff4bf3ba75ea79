// The on-disk cache's bound (codegen/DiskCache.h): least recently used
// entries go first, a read counts as a use, a write prunes now and then,
// and GRAPHC_CACHE_MAX_SIZE is read as a size.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "codegen/DiskCache.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / fmt::format("graphc-disk-cache-{}", ::getpid());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

/// Entry i's file, its modification time set to `second`.
fs::path writeEntry(const fs::path& dir, int i, long second) {
  const std::string key = codegen::cacheKey(std::to_string(i));
  const fs::path file = dir / key;
  codegen::writeCacheEntry(file, key, std::string(1000, static_cast<char>('a' + i)));
  const struct timespec times[2] = {{second, 0}, {second, 0}};
  EXPECT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  return file;
}

TEST(DiskCache, PruneRemovesTheLeastRecentlyUsedFirst) {
  ::setenv("GRAPHC_CACHE_MAX_SIZE", "0", 1);  // no pruning by the writes themselves
  TempDir dir;
  std::vector<fs::path> files;
  for (int i = 0; i < 10; ++i) files.push_back(writeEntry(dir.path, i, 1'000'000 + i));
  // A read is a use: entry 0, the oldest, becomes the newest.
  ASSERT_TRUE(codegen::readCacheEntry(files[0], codegen::cacheKey("0")));
  fs::path temporary = dir.path / ".entry.tmp.1.2.3";
  {
    std::FILE* f = std::fopen(temporary.c_str(), "w");
    std::fclose(f);
  }
  const uint64_t entryBytes = fs::file_size(files[0]);
  const codegen::CacheUsage usage = codegen::pruneCache(dir.path, 5 * entryBytes, 5 * entryBytes);
  EXPECT_EQ(usage.removed, 5);
  EXPECT_EQ(usage.entries, 5);
  EXPECT_EQ(usage.bytes, 5 * entryBytes);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(fs::exists(files[static_cast<size_t>(i)]), i == 0 || i > 5) << i;
  EXPECT_TRUE(fs::exists(temporary)) << "a write's temporary is not an entry";
  // keep = 0: every entry.
  EXPECT_EQ(codegen::pruneCache(dir.path, 0, 0).entries, 0);
  ::unsetenv("GRAPHC_CACHE_MAX_SIZE");
}

TEST(DiskCache, WritesKeepTheFolderWithinTheBound) {
  ::setenv("GRAPHC_CACHE_MAX_SIZE", "2K", 1);
  TempDir dir;
  // Of any 65 writes in a row, one after the first prunes (the first of a
  // process and every 64th scan the folder): two entries are over 2 KiB.
  for (int i = 0; i < 65; ++i) {
    const std::string key = codegen::cacheKey(fmt::format("w{}", i));
    codegen::writeCacheEntry(dir.path / key, key, std::string(1000, 'x'));
  }
  int64_t left = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) left += e.is_regular_file();
  EXPECT_LT(left, 65);
  ::unsetenv("GRAPHC_CACHE_MAX_SIZE");
}

TEST(DiskCache, TheBoundIsASize) {
  auto boundOf = [](const char* text) {
    ::setenv("GRAPHC_CACHE_MAX_SIZE", text, 1);
    const uint64_t bound = codegen::cacheSizeBound();
    ::unsetenv("GRAPHC_CACHE_MAX_SIZE");
    return bound;
  };
  EXPECT_EQ(boundOf("4096"), 4096u);
  EXPECT_EQ(boundOf("64K"), 64u << 10);
  EXPECT_EQ(boundOf("3M"), 3u << 20);
  EXPECT_EQ(boundOf("2G"), uint64_t{2} << 30);
  EXPECT_EQ(boundOf("0"), 0u);
  // Not a size: the default, 1 GiB.
  for (const char* bad : {"abc", "-5", "12T", "99999999999999999999G"})
    EXPECT_EQ(boundOf(bad), uint64_t{1} << 30) << bad;
  EXPECT_EQ(codegen::cacheSizeBound(), uint64_t{1} << 30);
}

}  // namespace
}  // namespace graphc
