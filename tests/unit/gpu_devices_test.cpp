// Device enumeration: never a crash, with or without a driver or GPU (runtime/cuda/gpu_devices.h).
// Built everywhere. What gxc found is held to what the CUDA runtime says when asked directly
// here, so a wrong reason or a lost GPU fails wherever the test runs.
#include <gtest/gtest.h>

#ifdef GXC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "runtime/cuda/gpu_devices.h"

namespace gxc {
namespace {

#ifndef GXC_HAVE_CUDA
TEST(GpuDevicesTest, EnumerationListsGpusOrSaysWhyThereAreNone) {
  EXPECT_FALSE(builtWithCuda());
  const GpuEnumeration& found = enumerateGpus();
  EXPECT_TRUE(found.gpus.empty());
  EXPECT_EQ(found.whyNone, "gxc was built without CUDA");
  EXPECT_EQ(&enumerateGpus(), &found);  // enumerated once
}
#else
TEST(GpuDevicesTest, EnumerationListsGpusOrSaysWhyThereAreNone) {
  EXPECT_TRUE(builtWithCuda());
  const GpuEnumeration& found = enumerateGpus();
  EXPECT_EQ(&enumerateGpus(), &found);  // enumerated once
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  cudaGetLastError();
  if (status != cudaSuccess) {
    // No driver: the runtime says cudaErrorInsufficientDriver ("CUDA driver version is
    // insufficient"), which misleads a user whose machine has no GPU at all; gxc says there
    // is no driver. No device: the driver's finding.
    EXPECT_TRUE(found.gpus.empty());
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (status == cudaErrorInsufficientDriver && driver == 0)
      EXPECT_EQ(found.whyNone, "no GPU driver is installed");
    else if (status == cudaErrorNoDevice)
      EXPECT_EQ(found.whyNone, "the GPU driver finds no GPU");
    EXPECT_EQ(found.whyNone.find("insufficient"), std::string::npos) << found.whyNone;
    return;
  }
  ASSERT_EQ(found.gpus.size(), static_cast<size_t>(count));
  if (count == 0) {
    EXPECT_EQ(found.whyNone, "CUDA found no device");
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp properties{};
    ASSERT_EQ(cudaGetDeviceProperties(&properties, i), cudaSuccess);
    EXPECT_EQ(found.gpus[i].index, i);
    EXPECT_EQ(found.gpus[i].name, properties.name);
    EXPECT_EQ(found.gpus[i].memoryBytes, static_cast<int64_t>(properties.totalGlobalMem));
    EXPECT_EQ(found.gpus[i].major, properties.major);
    EXPECT_EQ(found.gpus[i].minor, properties.minor);
    EXPECT_GE(found.gpus[i].major, 7);  // CUDA 13 runs on Turing (7.5) and later
  }
}
#endif

}  // namespace
}  // namespace gxc
