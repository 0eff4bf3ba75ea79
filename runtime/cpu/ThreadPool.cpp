#include "runtime/cpu/ThreadPool.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace graphc::runtime {

namespace {
thread_local bool insideChunk = false;

/// A polling loop's pause: lets the core's other hyperthread run and keeps
/// the loop from flooding the memory system.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/// Polls `ready` for at most ThreadPool::kSpin; true as soon as it holds.
template <typename Ready>
bool spinUntil(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + ThreadPool::kSpin;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

int threadsFromEnvironment() {
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const char* env = std::getenv("GRAPHC_NUM_THREADS");
  if (!env) return std::min(hardware, ThreadPool::kMaxThreads);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(env, env + std::strlen(env), n);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && *end == '\0' && n > ThreadPool::kMaxThreads)) {
    std::fprintf(stderr, "graphc: warning: GRAPHC_NUM_THREADS=%s is more than %d; using %d threads\n", env,
                 ThreadPool::kMaxThreads, ThreadPool::kMaxThreads);
    return ThreadPool::kMaxThreads;
  }
  if (ec != std::errc() || *end != '\0' || n <= 0) {
    std::fprintf(stderr, "graphc: warning: GRAPHC_NUM_THREADS=%s is not a positive integer; using %d threads\n", env,
                 hardware);
    return std::min(hardware, ThreadPool::kMaxThreads);
  }
  return static_cast<int>(n);
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  threads = std::clamp(threads, 1, kMaxThreads);
  for (int i = 1; i < threads; ++i) {
    try {
      workers_.emplace_back([this] { workerLoop(); });
    } catch (const std::system_error& e) {
      // A process limit (RLIMIT_NPROC, a container's pids.max, memory for
      // stacks): run with the threads that did start.
      std::fprintf(stderr, "graphc: warning: could start only %d of %d threads (%s); continuing with %d\n", i, threads,
                   e.what(), i);
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();  // parked workers; spinning ones see the flag
  for (std::thread& t : workers_) t.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(threadsFromEnvironment());
  return pool;
}

int ThreadPool::claim(Job& job) {
  if (job.claimed >= job.chunks) return -1;
  const int c = job.claimed++;
  if (job.claimed == job.chunks) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), &job));
    queued_.store(queue_.size(), std::memory_order_relaxed);
  }
  return c;
}

void ThreadPool::runChunk(Job& job, int c, std::unique_lock<std::mutex>& lock) {
  const bool failed = job.error != nullptr;
  lock.unlock();
  std::exception_ptr error;
  if (!failed) {
    const int64_t begin = c * job.chunkSize, end = std::min(job.n, begin + job.chunkSize);
    const bool outer = insideChunk;
    insideChunk = true;
    try {
      if (begin < end) (*job.body)(begin, end, c);
    } catch (...) {
      error = std::current_exception();
    }
    insideChunk = outer;
  }
  lock.lock();
  if (error && !job.error) job.error = error;
  // Under the lock, and the last use of the job: once the count is full
  // its owner may return and free it. A release, so that the owner, which
  // polls the count without the lock, also sees the chunk's error.
  if (job.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == job.chunks && parkedCallers_ > 0) done_.notify_all();
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
  if (TeamLauncher launch = team_.load(std::memory_order_acquire)) {
    runChunksOnTeam(launch, body, n, chunkSize, static_cast<int>((n + chunkSize - 1) / chunkSize));
    return;
  }
  Job job;
  job.body = &body;
  job.n = n;
  job.chunkSize = chunkSize;
  job.chunks = static_cast<int>((n + chunkSize - 1) / chunkSize);
  std::unique_lock lock(mutex_);
  queue_.push_back(&job);
  queued_.store(queue_.size(), std::memory_order_release);
  // Spinning workers see queued_; only parked ones need the (costly) wake.
  const bool wake = parkedWorkers_ > 0;
  lock.unlock();
  if (wake) wake_.notify_all();
  lock.lock();
  // The caller works on its own job only, so its return never waits on
  // another caller's chunks.
  for (int c; (c = claim(job)) >= 0;) runChunk(job, c, lock);
  const auto allFinished = [&] { return job.finished.load(std::memory_order_acquire) == job.chunks; };
  if (!allFinished()) {
    lock.unlock();
    const bool finished = spinUntil(allFinished);
    lock.lock();
    if (!finished) {
      ++parkedCallers_;
      done_.wait(lock, allFinished);
      --parkedCallers_;
    }
  }
  // The last chunk's runner may still hold the mutex; `lock` (taken after
  // the count was full) orders its release before the job goes away.
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::runChunksOnTeam(TeamLauncher launch, const Body& body, int64_t n, int64_t chunkSize, int chunks) {
  struct TeamJob {
    const Body* body;
    int64_t n, chunkSize;
    int chunks;
    std::atomic<int> next = 0;
    std::atomic<bool> failed = false;
    std::mutex errorMutex;
    std::exception_ptr error;
  } job{&body, n, chunkSize, chunks};
  // A member claims chunks rather than taking the one its thread number
  // names: the runtime may start fewer threads than asked (a thread
  // limit, a nested region), and every chunk must still run. No exception
  // crosses the runtime's C frames.
  const auto member = [](void* data) {
    TeamJob& job = *static_cast<TeamJob*>(data);
    const bool outer = insideChunk;
    insideChunk = true;
    for (int c; (c = job.next.fetch_add(1, std::memory_order_relaxed)) < job.chunks;) {
      if (job.failed.load(std::memory_order_relaxed)) continue;
      const int64_t begin = c * job.chunkSize, end = std::min(job.n, begin + job.chunkSize);
      try {
        if (begin < end) (*job.body)(begin, end, c);
      } catch (...) {
        std::lock_guard lock(job.errorMutex);
        if (!job.error) job.error = std::current_exception();
        job.failed.store(true, std::memory_order_relaxed);
      }
    }
    insideChunk = outer;
  };
  launch(member, &job, static_cast<unsigned>(chunks), 0);
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::workerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (stopping_) return;
    if (!queue_.empty()) {
      Job& job = *queue_.front();
      runChunk(job, claim(job), lock);
      continue;
    }
    // Out of work: poll for the next job, then park.
    lock.unlock();
    spinUntil([&] { return queued_.load(std::memory_order_acquire) > 0 || stopping_.load(std::memory_order_relaxed); });
    lock.lock();
    if (queue_.empty() && !stopping_) {
      ++parkedWorkers_;
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      --parkedWorkers_;
    }
  }
}

}  // namespace graphc::runtime
