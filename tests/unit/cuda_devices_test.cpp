// Device enumeration: never a crash, with or without a driver or GPU (runtime/cuda/gpu_devices.h);
// and what the driver makes of real GPUs (tools/driver/device_list.h) before anything runs:
// each GPU's usable memory in the Target, and an --arch one of them cannot run refused. The
// driver's part runs on fake GPUs; only the measurement itself needs a real one.
#include <gtest/gtest.h>

#include <sstream>

#include "cuda_test_helpers.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/cuda/gpu_devices.h"
#include "tools/driver/compile_session.h"

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

// Two fake A100s (compute capability 8.0, 80 GiB each), of which gxc may use `usable` bytes.
struct FakeGpus {
  GpuEnumeration enumeration;
  GpuProbe probe;
  std::vector<int> measured;  // the GPUs whose memory the driver asked for

  explicit FakeGpus(int64_t usable) {
    for (int i = 0; i < 2; ++i)
      enumeration.gpus.push_back({i, "Fake A100", int64_t{80} << 30, 8, 0});
    probe.enumerate = [this]() -> const GpuEnumeration& { return enumeration; };
    probe.usableMemory = [this, usable](int index) {
      measured.push_back(index);
      return usable;
    };
  }
};

CompileOptions mlpOn(const std::string& devices, const FakeGpus& gpus) {
  CompileOptions options;
  options.modelPath = std::string(GXC_SOURCE_DIR) + "/models/mlp.yaml";
  options.devices = devices;
  options.gpus = &gpus.probe;
  return options;
}

TEST(CudaDevicesTest, TheTargetHasEachRunGpusUsableMemoryNotItsTotal) {
  FakeGpus gpus(int64_t{1} << 30);
  std::ostringstream notes;
  CompiledModel compiled = compileModel(mlpOn("1", gpus), notes);
  EXPECT_EQ(gpus.measured, std::vector<int>{1}) << "only the run's GPU is measured";
  ASSERT_EQ(compiled.devices.gpus.size(), 1u);
  EXPECT_EQ(compiled.devices.gpus[0].index, 1);
  EXPECT_EQ(compiled.target.memoryOf(Device::cuda(0)), int64_t{1} << 30);
}

// 17 KiB is all the MLP needs on one GPU: far below 80 GiB, but above the 16 KiB usable.
TEST(CudaDevicesTest, PlanMemoryRefusesAPlanThatFitsTheTotalButNotWhatIsUsable) {
  FakeGpus gpus(16 << 10);
  std::ostringstream notes;
  try {
    compileModel(mlpOn("0", gpus), notes);
    ADD_FAILURE() << "the plan was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), 1);
    EXPECT_EQ(error.message(),
              "the plan does not fit: cuda:0 needs 17.0 KiB, has 16.0 KiB (largest: act2 8.0 "
              "KiB, act1 4.0 KiB, x.cuda0 3.2 KiB)");
  }
}

TEST(CudaDevicesTest, AnArchTheRunsGpusCannotRunIsRefusedBeforeThePasses) {
  FakeGpus gpus(int64_t{1} << 30);
  CompileOptions options = mlpOn("0,1", gpus);
  options.arch = "sm_90";
  options.archRunsHere = true;
  options.passes.printIrAfter = "all";  // a pass that ran would print its IR
  std::ostringstream notes;
  try {
    compileModel(options, notes);
    ADD_FAILURE() << "sm_90 was accepted for GPUs of compute capability 8.0";
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), 2);
    EXPECT_EQ(formatError(error),
              "gxc: error: --arch sm_90: GPU 0 (Fake A100) has compute capability 8.0, which "
              "cannot run code built for sm_90; leave --arch out to build for the run's oldest "
              "GPU");
  }
  EXPECT_EQ(notes.str(), "") << "no pass ran";
  // What they can run, and `compile`, which may build for GPUs elsewhere, are let through.
  options.arch = "sm_80";
  EXPECT_NO_THROW(compileModel(options, notes));
  options.arch = "sm_90";
  options.archRunsHere = false;
  EXPECT_NO_THROW(compileModel(options, notes));
}

}  // namespace
}  // namespace gxc
