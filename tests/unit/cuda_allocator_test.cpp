// The caching allocator over real GPU memory: PyTorch's statistics, memory that works.
#include <gtest/gtest.h>

#include <vector>

#include "cuda_test_helpers.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_check.h"

namespace gxc {
namespace {

TEST(CudaAllocatorTest, StatisticsMatchTheAccountingAndBlocksHoldData) {
  GXC_REQUIRE_GPUS(1);
  auto allocator = makeCudaCachingAllocator("cuda:0", 0, enumerateGpus().gpus[0].memoryBytes);
  CachingAllocator::Block a = allocator->allocate(1000, "a");
  CachingAllocator::Block b = allocator->allocate(3000, "b");
  CachingAllocator::Block large = allocator->allocate(int64_t{30} << 20, "large");
  ASSERT_NE(a.address, nullptr);
  ASSERT_NE(b.address, nullptr);
  ASSERT_NE(large.address, nullptr);
  // a and b share one 2 MiB small segment, 512-byte apart blocks; large has its own.
  EXPECT_EQ(static_cast<char*>(b.address) - static_cast<char*>(a.address), 1024);
  MemoryStats stats = allocator->stats();
  EXPECT_EQ(stats.allocatedBytes, 1024 + 3072 + (int64_t{30} << 20));
  EXPECT_EQ(stats.reservedBytes, (int64_t{2} << 20) + (int64_t{30} << 20));
  EXPECT_EQ(stats.deviceAllocations, 2);

  std::vector<float> values(250, 1.5f), back(250, 0.0f);
  checkCuda(cudaMemcpy(a.address, values.data(), 1000, cudaMemcpyHostToDevice), "test upload");
  checkCuda(cudaMemcpy(back.data(), a.address, 1000, cudaMemcpyDeviceToHost), "test download");
  EXPECT_EQ(back, values);

  allocator->free(a);
  CachingAllocator::Block again = allocator->allocate(900, "again");
  EXPECT_EQ(again.address, a.address);  // served from the cache
  // b came from the rest of a's segment, `again` from a's freed block: neither cudaMalloc'ed.
  EXPECT_EQ(allocator->stats().cacheHits, 2);
  allocator->free(again);
  allocator->free(b);
  allocator->free(large);
  allocator->releaseCached();
  stats = allocator->stats();
  EXPECT_EQ(stats.reservedBytes, 0);
  EXPECT_EQ(stats.deviceFrees, 2);
  EXPECT_EQ(stats.peakReservedBytes, (int64_t{2} << 20) + (int64_t{30} << 20));
}

TEST(CudaAllocatorTest, MoreThanTheGpuHoldsIsOutOfMemoryNamingThePurpose) {
  GXC_REQUIRE_GPUS(1);
  int64_t total = enumerateGpus().gpus[0].memoryBytes;
  auto allocator = makeCudaCachingAllocator("cuda:0", 0, total);
  try {
    allocator->allocate(total, "layer 'huge'");  // the context itself takes some: cannot fit
    FAIL() << "allocated the whole GPU";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_NE(error.message().find("cuda:0 out of memory"), std::string::npos) << error.message();
    EXPECT_NE(error.message().find("layer 'huge'"), std::string::npos);
  }
  EXPECT_EQ(allocator->stats().reservedBytes, 0);
}

}  // namespace
}  // namespace gxc
