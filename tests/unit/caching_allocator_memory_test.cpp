// The caching allocator with real memory under its segments (CachingAllocator::SegmentMemory),
// as the cuda platform uses it, here over host memory so it runs everywhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "runtime/caching_allocator.h"

namespace gxc {
namespace {

// Host memory standing in for a GPU's, that can be told to refuse (another process took the
// memory), and that checks every release matches a reserve.
class FakeMemory : public CachingAllocator::SegmentMemory {
 public:
  explicit FakeMemory(std::map<void*, int64_t>& live) : live_(live) {}
  void* reserve(int64_t bytes) override {
    if (refuseNext > 0) {
      --refuseNext;
      return nullptr;
    }
    void* memory = std::malloc(static_cast<size_t>(bytes));
    live_[memory] = bytes;
    return memory;
  }
  void release(void* base) override {
    EXPECT_EQ(live_.erase(base), 1u) << "release of memory never reserved";
    std::free(base);
  }
  int refuseNext = 0;

 private:
  std::map<void*, int64_t>& live_;
};

TEST(CachingAllocatorMemoryTest, BlocksHaveAddressesInsideTheirSegments) {
  std::map<void*, int64_t> live;
  auto memory = std::make_unique<FakeMemory>(live);
  CachingAllocator allocator("cuda:0", int64_t{1} << 30, std::move(memory));
  CachingAllocator::Block a = allocator.allocate(100, "a");
  CachingAllocator::Block b = allocator.allocate(600, "b");
  ASSERT_EQ(live.size(), 1u);  // one 2 MiB small segment holds both
  char* base = static_cast<char*>(live.begin()->first);
  EXPECT_EQ(a.address, base);
  EXPECT_EQ(b.address, base + 512);
  CachingAllocator::Block large = allocator.allocate(int64_t{12} << 20, "large");
  EXPECT_EQ(live.size(), 2u);
  EXPECT_EQ(live.at(large.address), int64_t{12} << 20);
  allocator.free(large);
  allocator.releaseCached();  // the large segment is wholly free: released
  EXPECT_EQ(live.size(), 1u);
  allocator.free(a);
  allocator.free(b);
}

TEST(CachingAllocatorMemoryTest, ARefusedReserveReleasesTheCacheAndTriesAgain) {
  std::map<void*, int64_t> live;
  auto owned = std::make_unique<FakeMemory>(live);
  FakeMemory* memory = owned.get();
  CachingAllocator allocator("cuda:1", int64_t{1} << 30, std::move(owned));
  allocator.free(allocator.allocate(int64_t{20} << 20, "cached"));
  EXPECT_EQ(allocator.stats().reservedBytes, int64_t{20} << 20);
  memory->refuseNext = 1;
  CachingAllocator::Block block = allocator.allocate(int64_t{40} << 20, "big");
  EXPECT_NE(block.address, nullptr);
  MemoryStats stats = allocator.stats();
  EXPECT_EQ(stats.deviceFrees, 1);  // the cached 20 MiB went back before the retry
  EXPECT_EQ(stats.reservedBytes, int64_t{40} << 20);
  allocator.free(block);
}

TEST(CachingAllocatorMemoryTest, ReservesThatKeepFailingAreOutOfMemoryAndChangeNothing) {
  std::map<void*, int64_t> live;
  auto owned = std::make_unique<FakeMemory>(live);
  FakeMemory* memory = owned.get();
  CachingAllocator allocator("cuda:0", int64_t{1} << 30, std::move(owned));
  memory->refuseNext = 2;
  try {
    allocator.allocate(int64_t{64} << 20, "layer 'h'");
    FAIL() << "allocated";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_EQ(
        error.message().rfind("cuda:0 out of memory: tried to allocate 64.0 MiB (layer 'h')", 0),
        0u)
        << error.message();
  }
  EXPECT_EQ(allocator.stats().reservedBytes, 0);
  EXPECT_TRUE(live.empty());
}

TEST(CachingAllocatorMemoryTest, TheDestructorReleasesEverySegment) {
  std::map<void*, int64_t> live;
  {
    CachingAllocator allocator("cuda:0", int64_t{1} << 30, std::make_unique<FakeMemory>(live));
    allocator.allocate(1000, "kept");
    allocator.allocate(int64_t{30} << 20, "kept too");
    EXPECT_EQ(live.size(), 2u);
  }
  EXPECT_TRUE(live.empty());
}

TEST(CachingAllocatorMemoryTest, WithoutMemoryBlocksHaveNoAddress) {
  CachingAllocator allocator("cuda:0", int64_t{1} << 30);
  EXPECT_EQ(allocator.allocate(1000, "sim").address, nullptr);
}

}  // namespace
}  // namespace gxc
