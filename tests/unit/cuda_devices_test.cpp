// The usable memory of a real GPU (runtime/cuda/gpu_devices.h): what is free once the context
// exists, less cuBLASLt's workspace. Needs a GPU; the driver's use of it is tested on fake GPUs
// in driver_gpu_target_test.cpp.
#include <gtest/gtest.h>

#include "cuda_test_helpers.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/cuda/gpu_devices.h"

namespace gxc {
namespace {

// Usable: what is free with the context made, less cuBLASLt's workspace; so less than the
// whole memory, and no more than what cudaMemGetInfo then reports free.
TEST(CudaDevicesTest, UsableMemoryIsWhatIsFreeLessTheCublasLtWorkspace) {
  GXC_REQUIRE_GPUS(1);
  int64_t usable = usableGpuMemory(0);
  size_t free = 0, total = 0;
  CudaDeviceGuard guard(0);
  checkCuda(cudaMemGetInfo(&free, &total), "test");
  EXPECT_GT(usable, 0);
  EXPECT_LE(usable, static_cast<int64_t>(free) - kCublasLtWorkspaceBytes);
  EXPECT_LT(usable, enumerateGpus().gpus[0].memoryBytes);
}

}  // namespace
}  // namespace gxc
