// The caching allocator: PyTorch's rounding, segment sizes, cache reuse (best fit), the
// statistics, empty_cache, the out-of-memory message, and use from many threads at once.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "runtime/caching_allocator.h"
#include "target/byte_size.h"

namespace gxc {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;

TEST(SimCachingAllocatorTest, FormatsBytesAsTheMessagesDo) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(2 * kMiB), "2.0 MiB");
  EXPECT_EQ(formatBytes(15 * kGiB / 2), "7.5 GiB");
}

TEST(SimCachingAllocatorTest, RoundsRequestsAndReservesPyTorchSegments) {
  CachingAllocator allocator("cuda:0", 80 * kGiB);
  auto small = allocator.allocate(1, "a");
  EXPECT_EQ(small.bytes, 512);
  MemoryStats stats = allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 512);
  EXPECT_EQ(stats.reservedBytes, 2 * kMiB);  // small requests share 2 MiB segments
  EXPECT_EQ(stats.deviceAllocations, 1);
  // A second small request comes out of the same segment: no cudaMalloc.
  auto second = allocator.allocate(1000, "b");
  EXPECT_EQ(second.bytes, 1024);
  EXPECT_EQ(allocator.stats().deviceAllocations, 1);
  EXPECT_EQ(allocator.stats().reservedBytes, 2 * kMiB);
  // Medium requests get 20 MiB segments, from the large pool: what the small segment has
  // left is not theirs.
  auto medium = allocator.allocate(3 * kMiB / 2, "c");
  EXPECT_EQ(allocator.stats().reservedBytes, 22 * kMiB);
  // A large request is served by what that segment has left (18.5 MiB) when it fits...
  auto large = allocator.allocate(11 * kMiB, "d");
  EXPECT_EQ(allocator.stats().reservedBytes, 22 * kMiB);
  // ...and otherwise gets a segment of its size rounded to 2 MiB.
  auto huge = allocator.allocate(29 * kMiB, "e");
  EXPECT_EQ(allocator.stats().reservedBytes, 52 * kMiB);
  EXPECT_EQ(allocator.stats().deviceAllocations, 3);
  // The 1 MiB left in its 30 MiB segment is too little to split off (PyTorch splits large
  // blocks only when over 1 MiB would remain), so the block is the whole segment.
  EXPECT_EQ(huge.bytes, 30 * kMiB);
  EXPECT_EQ(allocator.stats().allocatedBytes, 512 + 1024 + 3 * kMiB / 2 + 11 * kMiB + 30 * kMiB);
  for (auto block : {small, second, medium, large, huge}) allocator.free(block);
  EXPECT_EQ(allocator.stats().allocatedBytes, 0);
  EXPECT_EQ(allocator.stats().reservedBytes, 52 * kMiB);  // cached, not given back
}

TEST(SimCachingAllocatorTest, ReusesTheBestFittingCachedBlock) {
  CachingAllocator allocator("cuda:0", 80 * kGiB);
  auto b12 = allocator.allocate(12 * kMiB, "a");
  auto b24 = allocator.allocate(24 * kMiB, "b");
  auto b16 = allocator.allocate(16 * kMiB, "c");
  allocator.free(b12);
  allocator.free(b24);
  allocator.free(b16);
  auto reused = allocator.allocate(14 * kMiB, "d");
  EXPECT_EQ(reused.id, b16.id);  // the smallest cached block that fits
  EXPECT_EQ(reused.bytes, 14 * kMiB);
  MemoryStats stats = allocator.stats();
  EXPECT_EQ(stats.deviceAllocations, 3);
  EXPECT_EQ(stats.cacheHits, 1);
  EXPECT_EQ(stats.allocationRequests, 4);
  EXPECT_EQ(stats.reservedBytes, 52 * kMiB);
}

TEST(SimCachingAllocatorTest, PeaksStayUntilReset) {
  CachingAllocator allocator("cuda:0", 80 * kGiB);
  auto a = allocator.allocate(12 * kMiB, "a");
  auto b = allocator.allocate(12 * kMiB, "b");
  allocator.free(a);
  allocator.free(b);
  auto c = allocator.allocate(4 * kMiB, "c");
  MemoryStats stats = allocator.stats();
  EXPECT_EQ(stats.peakAllocatedBytes, 24 * kMiB);
  EXPECT_EQ(stats.peakReservedBytes, 24 * kMiB);
  EXPECT_EQ(stats.allocatedBytes, 4 * kMiB);
  allocator.resetPeaks();
  stats = allocator.stats();
  EXPECT_EQ(stats.peakAllocatedBytes, 4 * kMiB);
  EXPECT_EQ(stats.peakReservedBytes, 24 * kMiB);  // still reserved: the cache holds it
  allocator.free(c);
}

TEST(SimCachingAllocatorTest, ReleaseCachedGivesBackOnlyWhollyFreeSegments) {
  CachingAllocator allocator("cuda:0", 80 * kGiB);
  auto a = allocator.allocate(100 * kKiB, "a");  // three blocks of one 2 MiB segment
  auto b = allocator.allocate(100 * kKiB, "b");
  auto c = allocator.allocate(100 * kKiB, "c");
  auto big = allocator.allocate(12 * kMiB, "big");
  allocator.free(b);
  allocator.free(big);
  allocator.releaseCached();
  MemoryStats stats = allocator.stats();
  EXPECT_EQ(stats.reservedBytes, 2 * kMiB);  // the small segment still holds a and c
  EXPECT_EQ(stats.deviceFrees, 1);
  // Freed in any order, neighbours merge back into one free segment, which can go.
  allocator.free(c);
  allocator.free(a);
  allocator.releaseCached();
  stats = allocator.stats();
  EXPECT_EQ(stats.reservedBytes, 0);
  EXPECT_EQ(stats.allocatedBytes, 0);
  EXPECT_EQ(stats.deviceFrees, 2);
}

TEST(SimCachingAllocatorTest, OutOfMemoryNamesDeviceLayerAndBytes) {
  CachingAllocator allocator("cuda:1", 8 * kGiB);
  auto six = allocator.allocate(6 * kGiB, "warmup");
  allocator.free(six);
  // 5.9 GiB out of the cached 6 GiB segment: 6 GiB stay reserved.
  int64_t almostSix = 59 * kGiB / 10;
  auto held = allocator.allocate(almostSix, "held");
  try {
    allocator.allocate(15 * kGiB / 2, "layer 'h'");
    FAIL() << "expected out of memory";
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), 3);
    EXPECT_EQ(error.message(),
              "cuda:1 out of memory: tried to allocate 7.5 GiB (layer 'h'); 2.0 GiB free of "
              "8.0 GiB (5.9 GiB allocated, 6.0 GiB reserved)");
  }
  // Nothing changed for what was handed out.
  EXPECT_EQ(allocator.stats().allocatedBytes, held.bytes);
  EXPECT_EQ(allocator.stats().reservedBytes, 6 * kGiB);
  allocator.free(held);
}

TEST(SimCachingAllocatorTest, ReleasesTheCacheBeforeGivingUp) {
  CachingAllocator allocator("cuda:0", 64 * kMiB);
  auto a = allocator.allocate(40 * kMiB, "a");
  allocator.free(a);
  // The cached 40 MiB block is too small for 50 MiB, and 40 + 50 MiB would pass 64 MiB: the
  // cache goes back to the device first, as PyTorch does, and then 50 MiB fit.
  auto b = allocator.allocate(50 * kMiB, "b");
  MemoryStats stats = allocator.stats();
  EXPECT_EQ(stats.reservedBytes, 50 * kMiB);
  EXPECT_EQ(stats.deviceAllocations, 2);
  EXPECT_EQ(stats.deviceFrees, 1);
  EXPECT_EQ(stats.peakReservedBytes, 50 * kMiB);
  allocator.free(b);
}

TEST(SimCachingAllocatorTest, NearTheLimitASegmentOfExactlyTheRequestIsTried) {
  CachingAllocator allocator("cuda:0", 4 * kMiB);
  auto small = allocator.allocate(1 * kKiB, "a");       // a 2 MiB segment
  auto medium = allocator.allocate(3 * kMiB / 2, "b");  // 20 MiB would not fit: 1.5 MiB does
  EXPECT_EQ(allocator.stats().reservedBytes, 2 * kMiB + 3 * kMiB / 2);
  allocator.free(small);
  allocator.free(medium);
}

TEST(SimCachingAllocatorTest, ZeroBytesReserveNothing) {
  CachingAllocator allocator("cuda:0", kMiB);
  auto none = allocator.allocate(0, "empty");
  EXPECT_EQ(none.id, 0);
  EXPECT_EQ(allocator.stats().reservedBytes, 0);
  allocator.free(none);
}

TEST(SimCachingAllocatorTest, ManyThreadsAtOnceKeepTheBooksStraight) {
  CachingAllocator allocator("cuda:0", 8 * kGiB);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&allocator, t] {
      std::vector<CachingAllocator::Block> held;
      for (int i = 0; i < 200; ++i) {
        held.push_back(allocator.allocate((i % 7 + 1) * 100 * kKiB + t, "t"));
        if (i % 3 == 0) {
          allocator.free(held.front());
          held.erase(held.begin());
        }
        (void)allocator.stats();
      }
      for (auto block : held) allocator.free(block);
    });
  }
  for (auto& thread : threads) thread.join();
  MemoryStats stats = allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 0);
  EXPECT_EQ(stats.allocationRequests, 800);
  allocator.releaseCached();
  EXPECT_EQ(allocator.stats().reservedBytes, 0);
}

}  // namespace
}  // namespace gxc
