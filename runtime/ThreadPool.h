// A small fork-join thread pool for the CPU backend: parallelFor splits a
// range into one contiguous chunk per thread and waits for all of them. The
// split depends only on the range, the grain and the pool size, so a kernel
// computes every element on the same chunk boundaries from run to run (no
// order-dependent parallel reductions: each element or row is produced by
// exactly one thread).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <utility>
#include <thread>
#include <vector>

namespace graphc::runtime {

class ThreadPool {
 public:
  /// `threads` >= 1 workers in all, the calling thread counted as one.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool: GRAPHC_NUM_THREADS threads if set (a positive
  /// integer), else one per hardware thread.
  static ThreadPool& global();

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Chunk body: [begin, end) and the chunk's number (< size(); a worker's
  /// scratch index).
  using Body = std::function<void(int64_t begin, int64_t end, int chunk)>;

  /// Runs body over [0, n) in at most size() chunks of at least `grain`
  /// elements (the last may be shorter); the caller runs chunk 0. Runs
  /// inline when there is one chunk or when called from inside a chunk.
  /// The first exception a chunk throws is rethrown here.
  void parallelFor(int64_t n, int64_t grain, const Body& body);

 private:
  void workerLoop(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const Body* body_ = nullptr;
  int64_t n_ = 0, chunkSize_ = 0;
  int chunks_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace graphc::runtime
