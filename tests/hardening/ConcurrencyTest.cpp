// What docs/embedding.md promises about threads, made to fail if it stops
// being true: the thread pool takes many callers at once; independent
// Executables, one shared Executable, concurrent compiles, compiled() and
// capture/replay all give the results a single thread gets; a run stops
// when its cancel flag is set; and a pool that cannot start every thread
// runs with those it has. CI runs this binary under ThreadSanitizer too
// (`cmake --preset tsan`), where a data race is a failure.
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "frontend/api/graphc.h"
#include "runtime/HostBufferCache.h"
#include "runtime/Random.h"
#include "runtime/cpu/OpenMpTeam.h"
#include "runtime/cpu/ThreadPool.h"

namespace graphc {
namespace {

using testing::allClose;

/// f32 kernels against the f64 reference, over GEMMs of 128 products.
constexpr testing::Tolerance kVsReference{1e-5, 1e-5};
// The MLP against the f64 reference: two f32 GEMMs (K = 64, then 128) and
// a softmax leave differences of several 1e-5 relative (6e-5 measured on
// one element at batch 40, with the packed GEMM); a race shows as values
// wrong wholesale, which this still catches.
constexpr testing::Tolerance kMlpVsReference{1e-4, 1e-5};

Tensor rand(std::vector<int64_t> shape, uint64_t seed) { return runtime::randomTensor(DType::F32, shape, seed); }

bool bitwiseEqual(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].type() != b[k].type() || std::memcmp(a[k].data(), b[k].data(), a[k].nbytes()) != 0) return false;
  return true;
}

/// Runs `body(t)` on `threads` threads at once and joins them.
template <typename Body>
void onThreads(int threads, Body body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { body(t); });
  for (std::thread& t : pool) t.join();
}

constexpr const char* kExp = "graph @g(%x: f32[N]) -> (f32[N]) {\n  %y = exp(%x)\n  return %y\n}\n";

constexpr const char* kMlp =
    R"(graph @mlp(%x: f32[B, 64], %w1: f32[128, 64], %b1: f32[128], %w2: f32[16, 128], %b2: f32[16]) -> (f32[B, 16]) {
  %h = linear(%x, %w1, %b1)
  %a = relu(%h)
  %l = linear(%a, %w2, %b2)
  %p = softmax(%l) {dim = -1}
  return %p
})";

std::vector<Tensor> mlpInputs(int64_t batch, uint64_t seed) {
  return {rand({batch, 64}, seed), rand({128, 64}, 2), rand({128}, 3), rand({16, 128}, 4), rand({16}, 5)};
}

// --- the pool ------------------------------------------------------------------

// What any pool must do, whoever runs its chunks (its own workers, or an
// OpenMP team: ThreadPoolOnTeam below).

/// Eight callers at once, each its own sizes: every caller's work done.
void expectEachCallerGetsItsWork(runtime::ThreadPool& pool) {
  onThreads(8, [&](int t) {
    for (int round = 0; round < 200; ++round) {
      const int64_t n = 1000 + 37 * t + round;
      std::vector<int64_t> out(static_cast<size_t>(n), -1);
      pool.parallelFor(n, 16, [&](int64_t begin, int64_t end, int chunk) {
        EXPECT_LT(chunk, pool.size());
        for (int64_t i = begin; i < end; ++i) out[static_cast<size_t>(i)] = i * t;
      });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(out[static_cast<size_t>(i)], i * t) << "thread " << t << " round " << round;
    }
  });
}

/// Half the callers' chunks throw: each exception reaches its own caller only.
void expectEachCallersExceptionStaysWithIt(runtime::ThreadPool& pool) {
  std::atomic<int> thrown = 0, completed = 0;
  onThreads(6, [&](int t) {
    for (int round = 0; round < 100; ++round) {
      std::atomic<int64_t> sum = 0;
      try {
        pool.parallelFor(4096, 64, [&](int64_t begin, int64_t end, int) {
          if (t % 2 == 0 && begin == 0) throw std::runtime_error("chunk failed");
          for (int64_t i = begin; i < end; ++i) sum += i;
        });
        EXPECT_NE(t % 2, 0);
        EXPECT_EQ(sum.load(), 4096 * 4095 / 2);
        ++completed;
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(t % 2, 0);
        EXPECT_STREQ(e.what(), "chunk failed");
        ++thrown;
      }
    }
  });
  EXPECT_EQ(thrown.load(), 300);
  EXPECT_EQ(completed.load(), 300);
}

/// A parallelFor inside a chunk runs inline, as one chunk.
void expectNestedCallsRunInline(runtime::ThreadPool& pool) {
  std::atomic<int64_t> total = 0;
  onThreads(3, [&](int) {
    pool.parallelFor(64, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i)
        pool.parallelFor(100, 1, [&](int64_t b, int64_t e, int chunk) {
          EXPECT_EQ(chunk, 0);  // inline: one chunk
          total += e - b;
        });
    });
  });
  EXPECT_EQ(total.load(), 3 * 64 * 100);
}

TEST(ThreadPoolConcurrency, ManyCallersEachGetTheirOwnWorkDone) {
  runtime::ThreadPool pool(4);
  expectEachCallerGetsItsWork(pool);
}

TEST(ThreadPoolConcurrency, OneCallersExceptionStaysWithThatCaller) {
  runtime::ThreadPool pool(4);
  expectEachCallersExceptionStaysWithIt(pool);
}

TEST(ThreadPoolConcurrency, NestedCallsRunInline) {
  runtime::ThreadPool pool(3);
  expectNestedCallsRunInline(pool);
}

/// GRAPHC_NUM_THREADS larger than the system allows: the pool starts what
/// it can, warns, and works. The limit on address space (thread stacks)
/// makes thread creation fail even for root, in a child process.
TEST(ThreadPoolConcurrency, StartsTheThreadsTheSystemAllows) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit under a small RLIMIT_AS";
#else
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{256} << 20);
    rlimit r{limit, limit};
    if (setrlimit(RLIMIT_AS, &r) != 0) _exit(3);
    runtime::ThreadPool pool(1000);  // 1000 stacks of 8 MiB do not fit in 256 MiB
    if (pool.size() >= 1000 || pool.size() < 2) _exit(4);
    std::vector<int> out(100000, 0);
    pool.parallelFor(100000, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) out[static_cast<size_t>(i)] = 1;
    });
    _exit(std::accumulate(out.begin(), out.end(), 0) == 100000 ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

// --- the pool on an OpenMP team ------------------------------------------------

/// A team as GOMP_parallel starts one, with as many threads as
/// gTeamThreads says (an OpenMP runtime may start fewer than asked).
std::atomic<int> gTeamThreads = 0;
void fakeTeam(void (*fn)(void*), void* data, unsigned threads, unsigned) {
  const int n = gTeamThreads.load() > 0 ? gTeamThreads.load() : static_cast<int>(threads);
  std::vector<std::thread> members;
  for (int t = 1; t < n; ++t) members.emplace_back([&] { fn(data); });
  fn(data);
  for (std::thread& m : members) m.join();
}

using Chunks = std::set<std::tuple<int64_t, int64_t, int>>;
Chunks chunksOf(runtime::ThreadPool& pool, int64_t n, int64_t grain) {
  std::mutex mutex;
  Chunks chunks;
  pool.parallelFor(n, grain, [&](int64_t begin, int64_t end, int chunk) {
    std::lock_guard lock(mutex);
    EXPECT_TRUE(chunks.emplace(begin, end, chunk).second) << "chunk " << chunk << " ran twice";
  });
  return chunks;
}

/// The chunks are the pool's, whoever runs them, and every one runs even
/// on a team of fewer threads than chunks.
TEST(ThreadPoolOnTeam, RunsThePoolsOwnChunks) {
  runtime::ThreadPool pool(4);
  std::vector<Chunks> own;
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1000, 16}, {7, 1}, {4096, 64}, {3, 8}, {1, 1}};
  for (auto [n, grain] : sizes) own.push_back(chunksOf(pool, n, grain));
  pool.runOnTeam(&fakeTeam);
  ASSERT_TRUE(pool.runsOnTeam());
  for (int threads : {0, 1, 2, 7}) {
    gTeamThreads = threads;
    for (size_t k = 0; k < sizes.size(); ++k)
      EXPECT_EQ(chunksOf(pool, sizes[k].first, sizes[k].second), own[k]) << "team of " << threads;
  }
  gTeamThreads = 0;
  pool.runOnTeam(nullptr);
  EXPECT_FALSE(pool.runsOnTeam());
  EXPECT_EQ(chunksOf(pool, 1000, 16), own[0]);
}

TEST(ThreadPoolOnTeam, ManyCallersExceptionsAndNesting) {
  runtime::ThreadPool pool(4);
  pool.runOnTeam(&fakeTeam);
  expectEachCallerGetsItsWork(pool);
  expectEachCallersExceptionStaysWithIt(pool);
  expectNestedCallsRunInline(pool);
}

/// With GNU OpenMP loaded (as PyTorch loads it), the global pool finds it,
/// runs the MLP on its team to the bits of its own workers, and hands the
/// work back.
TEST(ThreadPoolOnTeam, LoadedLibgompRunsTheMlpToTheSameBits) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "libgomp's barriers are not instrumented: ThreadSanitizer would see races that are not there";
#else
  runtime::ThreadPool& pool = runtime::ThreadPool::global();
  ASSERT_FALSE(pool.runsOnTeam());
  EXPECT_EQ(runtime::runOnLoadedOpenMpTeam(), "") << "no OpenMP runtime is loaded yet";
  EXPECT_FALSE(pool.runsOnTeam());

  Executable e = compile(Graph::parse(kMlp));
  const std::vector<Tensor> inputs = mlpInputs(256, 11);
  const std::vector<Tensor> own = e.run(inputs);

  void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL);  // tools/setup.sh installs libgomp1
  ASSERT_NE(gomp, nullptr) << dlerror();
  const std::string path = runtime::runOnLoadedOpenMpTeam();
  EXPECT_NE(path.find("libgomp"), std::string::npos) << path;
  EXPECT_TRUE(pool.runsOnTeam());
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(bitwiseEqual(e.run(inputs), own)) << "run " << i;
  std::atomic<int> wrong = 0;
  onThreads(3, [&](int) {  // each caller its own team
    for (int i = 0; i < 10; ++i)
      if (!bitwiseEqual(e.run(inputs), own)) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);
  pool.runOnTeam(nullptr);
  EXPECT_TRUE(bitwiseEqual(e.run(inputs), own));
#endif
}

// --- the host block cache ---------------------------------------------------------

/// Large blocks allocated on one thread and freed on another (a Python
/// tensor dropped elsewhere) go through the cache from 8 threads at once:
/// each holder fills its block with its own byte and finds it intact
/// before handing it on, so a block given to two holders shows up.
TEST(HostBufferCacheConcurrency, BlocksFreedOnOtherThreadsAreHandedOutOnce) {
  const size_t saved = runtime::setHostBufferCacheLimit(size_t{16} << 20);
  constexpr size_t kSizes[] = {runtime::kMinCachedBytes, 2 * runtime::kMinCachedBytes};
  std::mutex handoffMutex;
  std::vector<std::shared_ptr<std::byte[]>> handoff;  // freed by whichever thread takes them
  std::atomic<int> corrupted = 0;
  onThreads(8, [&](int t) {
    for (int i = 0; i < 200; ++i) {
      const size_t size = kSizes[static_cast<size_t>(i + t) % 2];
      std::shared_ptr<std::byte[]> block = runtime::allocateHostStorage(size);
      const auto mark = static_cast<std::byte>(t * 31 + i);
      std::memset(block.get(), static_cast<int>(mark), size);
      std::this_thread::yield();
      for (size_t k = 0; k < size; k += 4096)
        if (block[k] != mark) ++corrupted;
      std::lock_guard lock(handoffMutex);
      handoff.push_back(std::move(block));
      if (handoff.size() > 4) handoff.erase(handoff.begin());  // someone else's block freed here
    }
  });
  handoff.clear();
  EXPECT_EQ(corrupted.load(), 0);
  EXPECT_GT(runtime::hostBufferCacheStats().reused, 0u);
  runtime::setHostBufferCacheLimit(saved);
}

// --- executables ----------------------------------------------------------------

/// The issue's reproducer: two independent Executables on two threads.
TEST(ExecutableConcurrency, TwoIndependentExecutablesOnTwoThreads) {
  const Tensor x = rand({1 << 20}, 7);
  std::atomic<int> wrong = 0;
  onThreads(2, [&](int) {
    Executable e = compile(Graph::parse(kExp));
    const std::vector<Tensor> want = e.run({x});
    for (int i = 0; i < 100; ++i)
      if (!bitwiseEqual(e.run({x}), want)) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);
}

/// Each thread's results are bit for bit what a lone run gives: chunk
/// boundaries depend only on the sizes, never on who else is running.
TEST(ExecutableConcurrency, OneExecutableSharedByManyThreads) {
  for (Device device : {Device::Cpu, Device::Reference}) {
    Executable e = compile(Graph::parse(kMlp), {.device = device});
    std::vector<std::vector<Tensor>> inputs, want;
    for (int t = 0; t < 8; ++t) {
      inputs.push_back(mlpInputs(64 + 16 * t, 100 + static_cast<uint64_t>(t)));  // GEMMs of several shapes
      want.push_back(e.run(inputs.back()));
    }
    std::atomic<int> wrong = 0;
    onThreads(8, [&](int t) {
      for (int i = 0; i < (device == Device::Cpu ? 30 : 2); ++i)
        if (!bitwiseEqual(e.run(inputs[static_cast<size_t>(t)]), want[static_cast<size_t>(t)])) ++wrong;
    });
    EXPECT_EQ(wrong.load(), 0) << deviceName(device);
  }
}

TEST(ExecutableConcurrency, CompilesRunConcurrently) {
  std::atomic<int> wrong = 0;
  onThreads(4, [&](int t) {
    for (int k = 0; k < 4; ++k) {
      // A distinct constant per graph: distinct kernels, compiled in parallel.
      const double c = 1.0 + t * 10 + k;
      const std::string text = fmt::format(
          "graph @g(%x: f32[N]) -> (f32[N]) {{\n  %y = mul(%x, {:.1f})\n  %z = tanh(%y)\n  return %z\n}}\n", c);
      const Tensor x = rand({5000}, static_cast<uint64_t>(t * 10 + k));
      std::vector<Tensor> got = compile(Graph::parse(text)).run({x});
      std::vector<Tensor> want = compile(Graph::parse(text), {.device = Device::Reference}).run({x});
      if (!allClose(got[0], want[0], kVsReference)) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ExecutableConcurrency, CompiledFromManyThreadsCompilesEachShapeOnce) {
  auto fn = [](TracedTensor x, TracedTensor w1, TracedTensor b1, TracedTensor w2, TracedTensor b2) {
    return softmax(linear(relu(linear(x, w1, b1)), w2, b2), -1);
  };
  CompiledFunction f = compiled(fn, {.name = "mlp"});
  f.setLogSink([](const std::string&) {});
  Executable reference = compile(Graph::parse(kMlp), {.device = Device::Reference});
  const int64_t batches[] = {8, 24, 40};
  std::atomic<int> wrong = 0;
  onThreads(8, [&](int t) {
    for (int i = 0; i < 12; ++i) {
      std::vector<Tensor> in = mlpInputs(batches[(t + i) % 3], static_cast<uint64_t>(t * 100 + i));
      if (!allClose(f(in)[0], reference.run(in)[0], kMlpVsReference)) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  const CompileStats s = f.stats();
  EXPECT_EQ(s.compiles, 3);  // a call that finds its shape being compiled waits for that compile
  EXPECT_EQ(s.compiles + s.cacheHits + s.fallbackCalls, 8 * 12);
  EXPECT_EQ(s.fallbackCalls, 0);
}

TEST(ExecutableConcurrency, ReplaysFromManyThreadsTakeTurns) {
  for (Device device : {Device::Cpu, Device::Reference}) {
    Executable e = compile(Graph::parse(kMlp), {.device = device});
    std::vector<Tensor> in = mlpInputs(32, 9);
    std::vector<Tensor> out = {Tensor(DType::F32, {32, 16})};
    e.capture(in, out);
    const std::vector<Tensor> want = e.run(in);
    onThreads(6, [&](int) {
      for (int i = 0; i < 10; ++i) e.replay();
    });
    EXPECT_TRUE(allClose(out[0], want[0], {0, 0})) << deviceName(device);
  }
}

// --- cancellation ----------------------------------------------------------------

TEST(Cancellation, ASetFlagStopsTheRunBeforeItStarts) {
  std::atomic<bool> cancel = true;
  for (Device device : {Device::Cpu, Device::Reference}) {
    Executable e = compile(Graph::parse(kMlp), {.device = device});
    EXPECT_THROW(e.run(mlpInputs(4, 1), {.cancel = &cancel}), Cancelled) << deviceName(device);
    std::atomic<bool> keepGoing = false;
    EXPECT_EQ(e.run(mlpInputs(4, 1), {.cancel = &keepGoing}).size(), 1u);
  }
}

/// A run of several seconds (2^32 sines, fused into one reduction kernel)
/// stops when another thread sets the flag.
TEST(Cancellation, AnotherThreadStopsALongRun) {
  const char* text = R"(graph @g(%x: f32[1, 1]) -> (f32[1048576]) {
  %e = expand(%x) {shape = [1048576, 4096]}
  %s = sin(%e)
  %r = sum(%s) {dims = [1]}
  return %r
})";
  Executable e = compile(Graph::parse(text));
  const Tensor x = rand({1, 1}, 3);
  std::atomic<bool> cancel = false;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cancel = true;
  });
  EXPECT_THROW(e.run({x}, {.cancel = &cancel}), Cancelled);
  canceller.join();
}

}  // namespace
}  // namespace graphc
