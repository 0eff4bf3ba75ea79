#include "runtime/ThreadPool.h"

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace graphc::runtime {

namespace {
thread_local bool insideChunk = false;

int threadsFromEnvironment() {
  if (const char* env = std::getenv("GRAPHC_NUM_THREADS")) {
    int n = 0;
    auto [end, ec] = std::from_chars(env, env + std::strlen(env), n);
    if (ec == std::errc() && *end == '\0' && n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(threadsFromEnvironment());
  return pool;
}

void ThreadPool::parallelFor(int64_t n, int64_t grain, const Body& body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t byGrain = (n + grain - 1) / grain;
  const int chunks = static_cast<int>(std::min<int64_t>(size(), byGrain));
  if (chunks <= 1 || insideChunk) {
    body(0, n, 0);
    return;
  }
  // Equal chunks, rounded up to the grain so boundaries stay aligned.
  int64_t chunkSize = (n + chunks - 1) / chunks;
  chunkSize = (chunkSize + grain - 1) / grain * grain;
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    n_ = n;
    chunkSize_ = chunkSize;
    chunks_ = chunks;
    pending_ = chunks - 1;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  insideChunk = true;
  try {
    body(0, std::min(n, chunkSize), 0);
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
  insideChunk = false;
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::workerLoop(int index) {
  insideChunk = true;
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    if (index >= chunks_) continue;
    const Body* body = body_;
    const int64_t begin = index * chunkSize_, end = std::min(n_, begin + chunkSize_);
    lock.unlock();
    try {
      if (begin < end) (*body)(begin, end, index);
    } catch (...) {
      std::lock_guard errorLock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace graphc::runtime
