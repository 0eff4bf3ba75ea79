// Storage for large host tensors that an Executable hands out as results,
// kept for reuse when they are freed.
//
// A training step's outputs (activations saved for the backward, then the
// gradients) are freed by the caller a step later and allocated again, at
// the same sizes, on the next step. Through malloc every such block is a
// fresh mapping whose pages fault on first touch (glibc maps blocks above
// its threshold and unmaps them on free): ~1800 page faults and several
// milliseconds per step of a small MLP. PyTorch's caching allocators keep
// freed blocks by size for the same reason; this cache does so for blocks
// of at least kMinCachedBytes, bounded in total (GRAPHC_HOST_CACHE_MB,
// default 512; 0 turns it off), the oldest freed block evicted first.
//
// Thread-safe: blocks are freed from whatever thread drops the last
// reference (a Python tensor's owner). The cache lives as long as the
// process (never destroyed, so a block freed during exit still has one).
// Each copy of graphc's runtime in a process (libgraphc.so, a backend
// module) has its own cache; a block always returns to the one that made
// it.
#pragma once

#include <cstddef>
#include <memory>

namespace graphc::runtime {

/// Blocks smaller than this come from malloc and go back to it.
inline constexpr size_t kMinCachedBytes = size_t{256} << 10;

/// Uninitialised storage of `bytes` (≥ 1), 64-byte aligned: a cached
/// block of the same rounded size if one is free, else a new one. Throws
/// std::bad_alloc when memory runs out (after releasing the cache).
std::shared_ptr<std::byte[]> allocateHostStorage(size_t bytes);

struct HostBufferCacheStats {
  size_t cachedBytes = 0;  // held now, free for reuse
  size_t cachedBlocks = 0;
  size_t reused = 0;  // allocations served from the cache so far
  size_t limitBytes = 0;
};
HostBufferCacheStats hostBufferCacheStats();

/// Frees every cached block (torch.cuda.empty_cache's counterpart).
void releaseCachedHostBuffers();
/// Sets the bound on cached bytes (evicting down to it); returns the old
/// one. The default comes from GRAPHC_HOST_CACHE_MB.
size_t setHostBufferCacheLimit(size_t bytes);

}  // namespace graphc::runtime
