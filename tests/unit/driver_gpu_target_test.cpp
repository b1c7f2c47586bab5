// What the driver makes of the run's GPUs (tools/driver/device_list.h) before anything runs:
// each GPU's usable memory in the Target, and an --arch one of them cannot run refused. On
// fake GPUs, so it runs in every build; measuring a real GPU is cuda_devices_test.cpp's.
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/cuda/gpu_devices.h"
#include "tools/driver/compile_session.h"

namespace gxc {
namespace {

// Two fake A100s (compute capability 8.0, 80 GiB each), of which gxc may use `usable` bytes.
struct FakeGpus {
  GpuEnumeration enumeration;
  GpuProbe probe;
  std::vector<int> measured;  // the GPUs whose memory the driver asked for

  explicit FakeGpus(int64_t usable) {
    for (int i = 0; i < 2; ++i)
      enumeration.gpus.push_back({i, "Fake A100", int64_t{80} << 30, 8, 0});
    probe.builtWithCuda = [] { return true; };  // as if: these tests need no CUDA
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

TEST(DriverGpuTargetTest, TheTargetHasEachRunGpusUsableMemoryNotItsTotal) {
  FakeGpus gpus(int64_t{1} << 30);
  std::ostringstream notes;
  CompiledModel compiled = compileModel(mlpOn("1", gpus), CompileFor::Run, notes);
  EXPECT_EQ(gpus.measured, std::vector<int>{1}) << "only the run's GPU is measured";
  ASSERT_EQ(compiled.devices.gpus.size(), 1u);
  EXPECT_EQ(compiled.devices.gpus[0].index, 1);
  EXPECT_EQ(compiled.target.memoryOf(Device::cuda(0)), int64_t{1} << 30);
}

// 17 KiB is all the MLP needs on one GPU: far below 80 GiB, but above the 16 KiB usable.
TEST(DriverGpuTargetTest, PlanMemoryRefusesAPlanThatFitsTheTotalButNotWhatIsUsable) {
  FakeGpus gpus(16 << 10);
  std::ostringstream notes;
  try {
    compileModel(mlpOn("0", gpus), CompileFor::Run, notes);
    ADD_FAILURE() << "the plan was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), 1);
    EXPECT_EQ(error.message(),
              "the plan does not fit: cuda:0 needs 17.0 KiB, has 16.0 KiB (largest: act2 8.0 "
              "KiB, act1 4.0 KiB, x.cuda0 3.2 KiB)");
  }
}

TEST(DriverGpuTargetTest, AnArchTheRunsGpusCannotRunIsRefusedBeforeThePasses) {
  FakeGpus gpus(int64_t{1} << 30);
  CompileOptions options = mlpOn("0,1", gpus);
  options.arch = "sm_90";
  options.passes.printIrAfter = "all";  // a pass that ran would print its IR
  std::ostringstream notes;
  try {
    compileModel(options, CompileFor::Run, notes);
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
  EXPECT_NO_THROW(compileModel(options, CompileFor::Run, notes));
  options.arch = "sm_90";
  EXPECT_NO_THROW(compileModel(options, CompileFor::Emit, notes));
}

}  // namespace
}  // namespace gxc
