// How the sim executor fails: out of memory (exit 3, device, the arena or param and bytes
// named, nothing of the run kept), kernel errors reported asynchronously or, with launch blocking,
// at the failing layer, and graphs or configurations that break the contract.
#include <gtest/gtest.h>

#include "runtime/sim/sim_executor.h"
#include "sim_test_graphs.h"

namespace gxc {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;

// An activation of 1 MiB on cuda:0, then another: an arena of two does not fit in 1.5 MiB.
const char* const kTwoMegabyteActivations = R"(
graph @oom(%x: f32[256,1024] @cpu) -> (y) attributes {seed = 0} {
  %x.cuda0 = copy %x {stream = "cuda:0.h2d", record = 0} : f32[256,1024] @cpu -> @cuda:0
  %h = relu %x.cuda0 {stream = "cuda:0.compute", wait = [0], record = 1} : f32[256,1024] @cuda:0
  %y = copy %h {stream = "cuda:0.d2h", wait = [1]} : f32[256,1024] @cuda:0 -> @cpu
  return %y
}
)";

// An embedding lookup on cuda:0 and an independent branch on cuda:1.
const char* const kLookup = R"(
graph @lookup(%i: i64[4] @cpu) -> (e, z) attributes {seed = 0} {
  %table = param {init = "normal", name = "table", seed = 0} : f32[4,8] @cuda:0
  %p = param {init = "normal", name = "p", seed = 0} : f32[16] @cuda:1
  %i.cuda0 = copy %i {stream = "cuda:0.h2d", record = 0} : i64[4] @cpu -> @cuda:0
  %e = embedding %i.cuda0, %table {embedding_dim = 8, num_embeddings = 4, record = 1, stream = "cuda:0.compute", wait = [0]} : f32[4,8] @cuda:0
  %e.cpu = copy %e {stream = "cuda:0.d2h", wait = [1]} : f32[4,8] @cuda:0 -> @cpu
  %z = relu %p {stream = "cuda:1.compute", record = 2} : f32[16] @cuda:1
  %z.cpu = copy %z {stream = "cuda:1.d2h", wait = [2]} : f32[16] @cuda:1 -> @cpu
  return %e.cpu, %z.cpu
}
)";

SimConfig gpus(int count, int64_t memory = int64_t{80} << 30) {
  SimConfig config;
  config.gpus = count;
  config.memoryPerGpu = memory;
  return config;
}

// Runs `run`, which must throw a gxc::Error; returns it as the driver prints it.
template <typename Run>
std::string errorOf(Run run, int exitStatus) {
  try {
    run();
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), exitStatus) << formatError(error);
    return formatError(error);
  }
  ADD_FAILURE() << "expected a gxc::Error";
  return "";
}

std::map<std::string, Tensor> indices(std::vector<int64_t> values) {
  Tensor tensor(DType::I64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) tensor.storeInt(static_cast<int64_t>(i), values[i]);
  return {{"i", tensor}};
}

TEST(SimExecutorErrorsTest, AnArenaThatDoesNotFitNamesDeviceAndBytesAndKeepsNothing) {
  auto graph = simtest::parse(kTwoMegabyteActivations);
  auto inputs = simtest::defaultInputs(*graph);
  SimExecutor executor(*graph, gpus(1, 3 * kMiB / 2));
  std::string message = errorOf([&] { executor.run(inputs); }, 3);
  EXPECT_EQ(message,
            "gxc: error: cuda:0 out of memory: tried to allocate 2.0 MiB (the activations' arena "
            "of graph 'oom'); 1.5 MiB free of 1.5 MiB (0 B allocated, 0 B reserved)");
  for (Device device : {Device::cpu(), Device::cuda(0)}) {
    EXPECT_EQ(executor.memoryStats(device).allocatedBytes, 0) << device.str();
  }
  executor.releaseCached();
  EXPECT_EQ(executor.memoryStats(Device::cuda(0)).reservedBytes, 0);
  // The same graph fits in 2 MiB and matches the host.
  SimExecutor roomier(*graph, gpus(1, 2 * kMiB));
  auto outputs = roomier.run(inputs);
  EXPECT_EQ(outputs.at("y").toFloats(),
            simtest::runOnHost(kTwoMegabyteActivations, inputs).at("y").toFloats());
}

TEST(SimExecutorErrorsTest, AParamLargerThanTheGpuFailsWhenTheModelLoads) {
  auto graph = simtest::parse(simtest::kVeryBigModule);
  SimExecutor executor(*graph, gpus(2, 512 * kKiB));
  EXPECT_EQ(errorOf([&] { executor.run(simtest::defaultInputs(*graph)); }, 3),
            "gxc: error: cuda:0 out of memory: tried to allocate 781.2 KiB (param 'W1'); "
            "512.0 KiB free of 512.0 KiB (0 B allocated, 0 B reserved)");
  EXPECT_EQ(executor.memoryStats(Device::cuda(0)).allocatedBytes, 0);
  EXPECT_EQ(executor.memoryStats(Device::cuda(1)).allocatedBytes, 0);
}

TEST(SimExecutorErrorsTest, AKernelErrorIsReportedAtSynchronizationByDefault) {
  auto graph = simtest::parse(kLookup);
  SimExecutor executor(*graph, gpus(2));
  EXPECT_EQ(errorOf(
                [&] {
                  executor.run(indices({0, 1, 9, 2}));
                },
                3),
            "gxc: error: error on stream cuda:0.compute, reported when the run synchronized "
            "(GXC_LAUNCH_BLOCKING=1 reports it where it happens): layer 'e': embedding index 9 "
            "is out of range [0, 4)");
  // The independent branch went on running, as streams do: its copy pinned a buffer.
  EXPECT_EQ(executor.pinnedAllocations(), 3);
  // The param and the arena (i.cuda0, e) stay; the host keeps its arena (e.cpu, z.cpu), not
  // the input.
  EXPECT_EQ(executor.memoryStats(Device::cuda(0)).allocatedBytes, 512 + 1024);
  EXPECT_EQ(executor.memoryStats(Device::cpu()).allocatedBytes, 1024);
  // The streams are usable again: a good input runs and matches the host.
  auto good = indices({3, 0, 2, 1});
  auto outputs = executor.run(good);
  auto expected = simtest::runOnHost(kLookup, good);
  EXPECT_EQ(outputs.at("e").toFloats(), expected.at("e").toFloats());
  EXPECT_EQ(outputs.at("z").toFloats(), expected.at("z").toFloats());
}

TEST(SimExecutorErrorsTest, LaunchBlockingStopsAtTheFailingLayer) {
  auto graph = simtest::parse(kLookup);
  SimConfig config = gpus(2);
  config.launchBlocking = true;
  SimExecutor executor(*graph, config);
  EXPECT_EQ(errorOf(
                [&] {
                  executor.run(indices({0, 1, 9, 2}));
                },
                3),
            "gxc: error: layer 'e': embedding index 9 is out of range [0, 4) (on cuda:0, stream "
            "cuda:0.compute)");
  // Nothing after the failing layer was issued: cuda:1's download never pinned its buffer.
  EXPECT_EQ(executor.pinnedAllocations(), 2);
  EXPECT_EQ(executor.memoryStats(Device::cuda(1)).allocatedBytes, 512 + 512);  // p, z
  EXPECT_EQ(executor.memoryStats(Device::cpu()).allocatedBytes, 1024);
}

TEST(SimExecutorErrorsTest, LaunchBlockingComesFromTheEnvironment) {
  ::setenv("GXC_LAUNCH_BLOCKING", "1", 1);
  EXPECT_TRUE(launchBlockingFromEnvironment());
  ::setenv("GXC_LAUNCH_BLOCKING", "0", 1);
  EXPECT_FALSE(launchBlockingFromEnvironment());
  ::unsetenv("GXC_LAUNCH_BLOCKING");
  EXPECT_FALSE(launchBlockingFromEnvironment());
}

TEST(SimExecutorErrorsTest, AnOpWithoutAStreamIsAGxcBug) {
  auto graph = parseGraph(R"(
graph @unscheduled(%x: f32[4] @cpu) -> (y) {
  %y = relu %x : f32[4] @cpu
  return %y
}
)",
                          "unscheduled.gxir");
  EXPECT_THROW(SimExecutor(*graph, gpus(1)), InternalError);
}

TEST(SimExecutorErrorsTest, ACopyOnTheWrongStreamIsAGxcBug) {
  auto graph = parseGraph(R"(
graph @wrong(%x: f32[4] @cpu) -> (y) {
  %x.cuda0 = copy %x {stream = "cuda:0.d2h"} : f32[4] @cpu -> @cuda:0
  %y = copy %x.cuda0 {stream = "cuda:0.d2h"} : f32[4] @cuda:0 -> @cpu
  return %y
}
)",
                          "wrong.gxir");
  EXPECT_THROW(SimExecutor(*graph, gpus(1)), InternalError);
}

TEST(SimExecutorErrorsTest, ALayerOnAGpuTheRunLacksIsAnError) {
  auto graph = simtest::parse(simtest::kVeryBigModule);
  EXPECT_EQ(errorOf([&] { SimExecutor(*graph, gpus(1)); }, 3),
            "gxc: error: layer 'W2' is on cuda:1, but the run has only cpu, cuda:0");
}

TEST(SimExecutorErrorsTest, ABadDeviceMapIsAUsageError) {
  auto graph = simtest::parse(simtest::kVeryBigModule);
  SimConfig twice = gpus(2);
  twice.deviceMap = {0, 0};
  EXPECT_EQ(errorOf([&] { SimExecutor(*graph, twice); }, 2),
            "gxc: error: --devices: GPU 0 is listed twice");
  SimConfig missing = gpus(2);
  missing.deviceMap = {0, 2};
  EXPECT_EQ(errorOf([&] { SimExecutor(*graph, missing); }, 2),
            "gxc: error: --devices: GPU 2 does not exist (--sim-gpus 2 gives GPUs 0 to 1)");
}

}  // namespace
}  // namespace gxc
