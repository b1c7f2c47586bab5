// Device enumeration: never a crash, with or without a driver or GPU (runtime/cuda/gpu_devices.h).
#include <gtest/gtest.h>

#include "runtime/cuda/gpu_devices.h"

namespace gxc {
namespace {

TEST(CudaDevicesTest, EnumerationListsGpusOrSaysWhyThereAreNone) {
  ASSERT_TRUE(builtWithCuda());
  const GpuEnumeration& found = enumerateGpus();
  if (found.gpus.empty()) {
    // No driver (cudaErrorInsufficientDriver) or no device: CUDA's own words.
    EXPECT_EQ(found.whyNone.rfind("CUDA", 0), 0u) << found.whyNone;
    return;
  }
  for (size_t i = 0; i < found.gpus.size(); ++i) {
    EXPECT_EQ(found.gpus[i].index, static_cast<int>(i));
    EXPECT_FALSE(found.gpus[i].name.empty());
    EXPECT_GT(found.gpus[i].memoryBytes, 0);
    EXPECT_GE(found.gpus[i].major, 7);  // CUDA 13 runs on Turing (7.5) and later
  }
  EXPECT_EQ(&enumerateGpus(), &found);  // enumerated once
}

}  // namespace
}  // namespace gxc
