// The sim platform's double-buffered staging (runtime/sim/sim_staging.h): the bytes arrive
// whole through both buffers, whatever the size, and each (GPU, direction) is pinned once.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "runtime/sim/sim_staging.h"

namespace gxc {
namespace {

std::vector<std::byte> counting(size_t size) {
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 7 + i / 251) & 0xff);
  return bytes;
}

TEST(SimStagingTest, CopiesOfEverySizeArriveWholeThroughBothBuffers) {
  SimStagingBuffers staging(1000);
  // Empty, smaller than a chunk, one chunk, both buffers, ragged: reusing a buffer is where a
  // chunking bug would show.
  for (size_t size : {0, 1, 999, 1000, 2000, 3500, 10001}) {
    for (CopyDirection direction : {CopyDirection::HostToDevice, CopyDirection::DeviceToHost}) {
      std::vector<std::byte> source = counting(size), destination(size, std::byte{0});
      staging.copy(3, direction, source.data(), destination.data(), size);
      EXPECT_EQ(destination, source) << size;
    }
  }
  EXPECT_EQ(staging.chunkBytes(), 1000);
  EXPECT_EQ(staging.pinnedAllocations(), 2);  // GPU 3, each direction once
  std::vector<std::byte> source = counting(50), destination(50);
  staging.copy(0, CopyDirection::HostToDevice, source.data(), destination.data(), 50);
  EXPECT_EQ(staging.pinnedAllocations(), 3);
}

}  // namespace
}  // namespace gxc
