// A small fork-join thread pool for the CPU backend: parallelFor splits a
// range into one contiguous chunk per thread and waits for all of them. The
// split depends only on the range, the grain and the pool size, so a kernel
// computes every element on the same chunk boundaries from run to run (no
// order-dependent parallel reductions: each element or row is produced by
// exactly one thread).
//
// Thread safety: any number of threads may call parallelFor at once (two
// Executables run from two threads, or one Executable from many). Each
// call is a job of its own in a queue; the workers take chunks from the
// oldest job, and a caller runs chunks of its own job until none is left,
// then waits for the chunks workers took. So a caller never waits on
// another caller's work, and a job's state lives until its last chunk is
// done.
//
// Idle threads spin before they park: a model runs tens of kernels a few
// microseconds apart, and waking a parked thread (a futex wake, a context
// switch) costs more than most of those kernels. A worker out of work
// polls the queue for kSpin before it sleeps on the condition variable,
// and a caller waiting for the chunks workers took polls their count for
// as long before it sleeps; the bound keeps an idle process idle.
//
// Inside a process that already runs an OpenMP team (graphc under
// torch.compile, beside PyTorch's libgomp), two pools on the same cores
// fight: the team's threads spin for milliseconds after each PyTorch op
// while the pool's workers want the cores. runOnTeam() hands parallelFor's
// chunks to that team instead (OpenMpTeam.h finds it), as Inductor's
// kernels do; the chunk boundaries stay the pool's, so results are the
// same bits either way.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace graphc::runtime {

class ThreadPool {
 public:
  /// `threads` >= 1 workers in all, the calling thread counted as one. When
  /// the system refuses a thread, the pool keeps those it could start and
  /// warns once on stderr.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool: GRAPHC_NUM_THREADS threads if set (a positive
  /// integer, at most kMaxThreads), else one per hardware thread.
  static ThreadPool& global();
  static constexpr int kMaxThreads = 1024;
  /// How long an idle thread polls before it parks: longer than the gap
  /// between two kernels of a model, short enough not to be noticed.
  static constexpr std::chrono::microseconds kSpin{200};

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Chunk body: [begin, end) and the chunk's number (< size(); a scratch
  /// index unique among the chunks of one call).
  using Body = std::function<void(int64_t begin, int64_t end, int chunk)>;

  /// An OpenMP runtime's `GOMP_parallel(fn, data, threads, flags)`: runs
  /// fn(data) on a team of `threads` (the caller one of them) and returns
  /// when every member has.
  using TeamLauncher = void (*)(void (*fn)(void*), void* data, unsigned threads, unsigned flags);
  /// From now on runs the chunks of parallelFor on the team `launch`
  /// starts, not on the pool's workers (which then stay parked); nullptr
  /// goes back to the workers. The number and bounds of chunks do not
  /// change.
  void runOnTeam(TeamLauncher launch) { team_.store(launch, std::memory_order_release); }
  bool runsOnTeam() const { return team_.load(std::memory_order_acquire) != nullptr; }

  /// Runs body over [0, n) in at most size() chunks of at least `grain`
  /// elements (the last may be shorter). Runs inline when there is one
  /// chunk or when called from inside a chunk. The first exception a chunk
  /// throws is rethrown here (chunks not yet started are then skipped).
  void parallelFor(int64_t n, int64_t grain, const Body& body);

 private:
  struct Job {
    const Body* body = nullptr;
    int64_t n = 0, chunkSize = 0;
    int chunks = 0;
    int claimed = 0;                // guarded by the pool's mutex
    std::atomic<int> finished = 0;  // written under the mutex, polled without it
    std::exception_ptr error;
  };

  void workerLoop();
  /// parallelFor's chunks on an OpenMP team: each member claims chunks
  /// until none is left.
  static void runChunksOnTeam(TeamLauncher launch, const Body& body, int64_t n, int64_t chunkSize, int chunks);
  /// Runs chunk `c` of `job` (outside the lock) and records its end.
  void runChunk(Job& job, int c, std::unique_lock<std::mutex>& lock);
  /// Claims the next chunk of `job`, taking the job off the queue with its
  /// last one; -1 when every chunk is claimed. Called under the lock.
  int claim(Job& job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Job*> queue_;          // jobs with unclaimed chunks, oldest first
  std::atomic<size_t> queued_ = 0;  // queue_.size(), polled by spinning workers
  int parkedWorkers_ = 0;           // waiting on wake_; guarded by the mutex
  int parkedCallers_ = 0;           // waiting on done_; guarded by the mutex
  std::atomic<bool> stopping_ = false;
  std::atomic<TeamLauncher> team_ = nullptr;
};

}  // namespace graphc::runtime
