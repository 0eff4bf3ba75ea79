// The cache of large host blocks behind Executables' results
// (runtime/HostBufferCache.h): a freed block is handed to the next
// allocation of its size and no other, small blocks and blocks over the
// bound are not kept, the bound evicts the oldest first, and a cpu
// Executable's results of one call are the storage of the next once the
// caller has dropped them (what spares a training step its page faults).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/cpu/CpuExecutable.h"
#include "runtime/HostBufferCache.h"
#include "runtime/Random.h"

namespace graphc {
namespace {

using runtime::allocateHostStorage;
using runtime::hostBufferCacheStats;

constexpr size_t kBig = runtime::kMinCachedBytes;

/// Each test starts from an empty cache with the default bound, and puts
/// the bound back after.
class HostBufferCache : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime::releaseCachedHostBuffers();
    savedLimit_ = runtime::setHostBufferCacheLimit(size_t{64} << 20);
  }
  void TearDown() override {
    runtime::setHostBufferCacheLimit(savedLimit_);
    runtime::releaseCachedHostBuffers();
  }

 private:
  size_t savedLimit_ = 0;
};

TEST_F(HostBufferCache, AFreedBlockServesTheNextAllocationOfItsSizeOnly) {
  std::byte* first = nullptr;
  {
    auto block = allocateHostStorage(kBig + 100);
    first = block.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  }
  EXPECT_EQ(hostBufferCacheStats().cachedBlocks, 1u);
  const size_t reused = hostBufferCacheStats().reused;
  {
    auto other = allocateHostStorage(3 * kBig);  // another size: a new block
    EXPECT_NE(other.get(), first);
    EXPECT_EQ(hostBufferCacheStats().reused, reused);
  }
  auto again = allocateHostStorage(kBig + 200);  // same size in pages
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(hostBufferCacheStats().reused, reused + 1);
  EXPECT_EQ(hostBufferCacheStats().cachedBlocks, 1u);  // the 3·kBig block
}

TEST_F(HostBufferCache, SmallBlocksAreNotKept) {
  {
    auto small = allocateHostStorage(kBig - 1);
  }
  EXPECT_EQ(hostBufferCacheStats().cachedBlocks, 0u);
  EXPECT_EQ(hostBufferCacheStats().cachedBytes, 0u);
}

TEST_F(HostBufferCache, TheBoundEvictsTheOldestAndRefusesLargerBlocks) {
  runtime::setHostBufferCacheLimit(3 * kBig);
  std::byte* second = nullptr;
  {
    auto a = allocateHostStorage(kBig);
    auto b = allocateHostStorage(kBig);
    auto c = allocateHostStorage(2 * kBig);
    second = b.get();
    a.reset();  // freed first
    b.reset();
    c.reset();  // 4·kBig held: a goes
  }
  EXPECT_EQ(hostBufferCacheStats().cachedBytes, 3 * kBig);
  EXPECT_EQ(hostBufferCacheStats().cachedBlocks, 2u);
  {
    auto huge = allocateHostStorage(4 * kBig);
  }  // over the bound: freed
  EXPECT_EQ(hostBufferCacheStats().cachedBytes, 3 * kBig);
  auto x = allocateHostStorage(kBig);  // b's block, the one kept of its size
  EXPECT_EQ(x.get(), second);
  EXPECT_EQ(hostBufferCacheStats().cachedBytes, 2 * kBig);
  runtime::setHostBufferCacheLimit(0);  // off: evicts all, keeps nothing
  EXPECT_EQ(hostBufferCacheStats().cachedBytes, 0u);
  x.reset();
  EXPECT_EQ(hostBufferCacheStats().cachedBlocks, 0u);
}

TEST_F(HostBufferCache, AnExecutablesResultsAreTheNextCallsStorageOnceDropped) {
  auto m = testing::optimisedOk(
      "graph @g(%x: f32[256, 512], %w: f32[512, 512]) -> (f32[256, 512], f32[256, 512]) {\n"
      "  %h = linear(%x, %w)\n  %y = relu(%h)\n  %z = exp(%h)\n  return %y, %z\n}\n");
  auto exe = codegen::cpu::compileGraph(*m->entry());
  const std::vector<runtime::Tensor> inputs = {runtime::randomTensor(ir::DType::F32, {256, 512}, 1),
                                               runtime::randomTensor(ir::DType::F32, {512, 512}, 2)};
  std::vector<runtime::Tensor> first = exe->run(inputs);
  const std::vector<runtime::Tensor> want = testing::copiesOf(first);
  const std::byte* y = first[0].data();
  const std::byte* z = first[1].data();
  first.clear();  // the caller drops both results
  const size_t reused = hostBufferCacheStats().reused;
  std::vector<runtime::Tensor> second = exe->run(inputs);
  EXPECT_EQ(hostBufferCacheStats().reused, reused + 2);
  EXPECT_TRUE((second[0].data() == y && second[1].data() == z) || (second[0].data() == z && second[1].data() == y));
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(testing::allClose(second[k], want[k], {0, 0})) << k;
}

}  // namespace
}  // namespace graphc
