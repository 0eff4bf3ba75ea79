#include "runtime/HostBufferCache.h"

#include <cstdlib>
#include <list>
#include <mutex>
#include <new>

namespace graphc::runtime {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kPage = 4096;

size_t limitFromEnvironment() {
  const char* env = std::getenv("GRAPHC_HOST_CACHE_MB");
  if (!env || !*env) return size_t{512} << 20;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(env, &end, 10);
  if (*end != '\0' || mb > (size_t{1} << 30)) return size_t{512} << 20;  // unreadable: the default
  return static_cast<size_t>(mb) << 20;
}

class Cache {
 public:
  std::byte* take(size_t size) {
    std::lock_guard lock(mutex_);
    // Newest first: the block most recently freed is likeliest in cache.
    for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
      if (it->size != size) continue;
      std::byte* data = it->data;
      cachedBytes_ -= size;
      free_.erase(std::next(it).base());
      ++reused_;
      return data;
    }
    return nullptr;
  }

  void give(std::byte* data, size_t size) {
    {
      std::lock_guard lock(mutex_);
      if (size <= limit_) {
        free_.push_back({data, size});
        cachedBytes_ += size;
        evictTo(limit_);
        return;
      }
    }
    std::free(data);
  }

  size_t setLimit(size_t bytes) {
    std::lock_guard lock(mutex_);
    const size_t old = limit_;
    limit_ = bytes;
    evictTo(limit_);
    return old;
  }

  void release() {
    std::lock_guard lock(mutex_);
    evictTo(0);
  }

  HostBufferCacheStats stats() {
    std::lock_guard lock(mutex_);
    return {cachedBytes_, free_.size(), reused_, limit_};
  }

 private:
  struct Block {
    std::byte* data;
    size_t size;
  };

  // Oldest freed first; caller holds mutex_.
  void evictTo(size_t bytes) {
    while (cachedBytes_ > bytes) {
      cachedBytes_ -= free_.front().size;
      std::free(free_.front().data);
      free_.pop_front();
    }
  }

  std::mutex mutex_;
  std::list<Block> free_;  // in the order they were freed
  size_t cachedBytes_ = 0;
  size_t reused_ = 0;
  size_t limit_ = limitFromEnvironment();
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: blocks may be freed during exit
  return *c;
}

}  // namespace

std::shared_ptr<std::byte[]> allocateHostStorage(size_t bytes) {
  if (bytes < kMinCachedBytes) return std::make_shared_for_overwrite<std::byte[]>(bytes);
  if (bytes > SIZE_MAX - kPage) throw std::bad_alloc();
  const size_t size = (bytes + kPage - 1) / kPage * kPage;
  std::byte* data = cache().take(size);
  if (!data) data = static_cast<std::byte*>(std::aligned_alloc(kAlignment, size));
  if (!data) {  // the cache's blocks may be what the allocation needs
    cache().release();
    data = static_cast<std::byte*>(std::aligned_alloc(kAlignment, size));
    if (!data) throw std::bad_alloc();
  }
  // Should the control block's allocation throw, shared_ptr calls the
  // deleter: the block goes to the cache, not astray.
  return std::shared_ptr<std::byte[]>(data, [size](std::byte* p) { cache().give(p, size); });
}

HostBufferCacheStats hostBufferCacheStats() { return cache().stats(); }

void releaseCachedHostBuffers() { cache().release(); }

size_t setHostBufferCacheLimit(size_t bytes) { return cache().setLimit(bytes); }

}  // namespace graphc::runtime
