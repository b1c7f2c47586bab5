// The cuda executor on real GPUs against the host oracle: the sim executor's scheduled graphs,
// the same streams, events, copies and allocator statistics.
#include <gtest/gtest.h>

#include "cuda_test_helpers.h"
#include "cuda_tolerances.h"
#include "output_compare.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_executor.h"
#include "sim_test_graphs.h"

namespace gxc {
namespace {

// One GPU: the input up, a linear with bias there, the result back.
const char* const kOneGpu = R"(
graph @one(%x: f32[300,64] @cpu) -> (y) attributes {seed = 2} {
  %w = param {init = "normal", name = "w", seed = 2} : f32[48,64] @cuda:0
  %b = param {init = "uniform", name = "b", seed = 2} : f32[48] @cuda:0
  %x.cuda0 = copy %x {record = 0, stream = "cuda:0.h2d"} : f32[300,64] @cpu -> @cuda:0
  %l = linear %x.cuda0, %w, %b {in_features = 64, out_features = 48, stream = "cuda:0.compute", wait = [0], record = 1} : f32[300,48] @cuda:0
  %y = copy %l {stream = "cuda:0.d2h", wait = [1]} : f32[300,48] @cuda:0 -> @cpu
  return %y
}
)";

CudaConfig gpus(std::vector<int> map) {
  CudaConfig config;
  config.deviceMap = std::move(map);
  config.stagingChunkBytes = 16 << 10;  // small, so copies go in several chunks
  return config;
}

TEST(CudaExecutorTest, OneGpuMatchesTheHostAndReportsMemoryAndCopies) {
  GXC_REQUIRE_GPUS(1);
  auto graph = simtest::parse(kOneGpu);
  auto inputs = simtest::defaultInputs(*graph);
  CudaExecutor executor(*graph, gpus({0}));
  CudaRunReport report;
  auto outputs = executor.run(inputs, &report);
  // The host runs linear through OpenBLAS: two f32 sums of 64 terms in different orders.
  expectOutputsCloseNormwise(outputs, simtest::runOnHost(kOneGpu, inputs),
                             2 * gputol::gemmTolerance(DType::F32, 64));
  ASSERT_EQ(report.devices.size(), 2u);
  const CudaDeviceReport& gpu = report.devices[1];
  EXPECT_EQ(gpu.device, "cuda:0");
  EXPECT_EQ(gpu.bytesCopiedIn, 300 * 64 * 4);
  EXPECT_EQ(gpu.bytesCopiedOut, 300 * 48 * 4);
  EXPECT_EQ(gpu.copiesIn, 1);
  EXPECT_EQ(gpu.copiesOut, 1);
  EXPECT_GT(gpu.ms, 0);
  // Params (w, b) and activations (x.cuda0, l) went through the caching allocator.
  EXPECT_GE(gpu.memory.peakAllocatedBytes, (48 * 64 + 48 + 300 * 64 + 300 * 48) * 4 - 4096);
  EXPECT_GE(gpu.memory.peakReservedBytes, gpu.memory.peakAllocatedBytes);
  EXPECT_EQ(executor.pinnedAllocations(), 2);  // h2d and d2h: pinned once each

  // The activations (x.cuda0 and l, both live at the linear) are bytes of one arena, reserved
  // once: no block of theirs is freed behind the streams, so no event is made for a free.
  // A second run reuses the arena, the params and the pinned buffers.
  EXPECT_EQ(executor.eventsCreated(), 0);
  auto again = executor.run(inputs, &report);
  expectOutputsClose(again, outputs, 0);
  EXPECT_EQ(executor.pinnedAllocations(), 2);
  EXPECT_EQ(executor.eventsCreated(), 0);
  MemoryStats after = executor.memoryStats(Device::cuda(0));
  int64_t arena = ((300 * 64 + 300 * 48) * 4 + 511) / 512 * 512;  // rounded as blocks are
  EXPECT_EQ(after.allocatedBytes, 48 * 64 * 4 + 512 + arena);     // w, b rounded to 512, the arena
  EXPECT_EQ(after.arenaReservedBytes, arena);
  EXPECT_GT(after.cacheHits, 0);  // b was carved from w's segment
}

// The capacity the driver planned with (the Target's) is the allocator's: 8 KiB cannot hold
// the 12 KiB param w, whatever the GPU has.
TEST(CudaExecutorTest, TheAllocatorHoldsToTheCapacityTheRunWasPlannedWith) {
  GXC_REQUIRE_GPUS(1);
  auto graph = simtest::parse(kOneGpu);
  CudaConfig config = gpus({0});
  config.memoryBytes = {8 << 10};
  CudaExecutor executor(*graph, config);
  try {
    executor.run(simtest::defaultInputs(*graph));
    ADD_FAILURE() << "ran in 8 KiB";
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), 3);
    EXPECT_EQ(error.message().rfind("cuda:0 out of memory: tried to allocate 12.0 KiB (param "
                                    "'w'); 8.0 KiB free of 8.0 KiB",
                                    0),
              0u)
        << error.message();
  }
}

TEST(CudaExecutorTest, AGeneratedKernelAndAViewRunOnTheGpu) {
  GXC_REQUIRE_GPUS(1);
  const char* text = R"(
graph @r(%x: f32[4,6] @cpu) -> (y) {
  %x.cuda0 = copy %x {record = 0, stream = "cuda:0.h2d"} : f32[4,6] @cpu -> @cuda:0
  %r = relu %x.cuda0 {stream = "cuda:0.compute", wait = [0]} : f32[4,6] @cuda:0
  %s = reshape %r {shape = [8, 3], stream = "cuda:0.compute"} : f32[8,3] @cuda:0
  %t = slice %s {axis = 0, end = 7, start = 2, stream = "cuda:0.compute", record = 1} : f32[5,3] @cuda:0
  %y = copy %t {stream = "cuda:0.d2h", wait = [1]} : f32[5,3] @cuda:0 -> @cpu
  return %y
}
)";
  auto graph = simtest::parse(text);
  auto inputs = simtest::defaultInputs(*graph);
  CudaExecutor executor(*graph, gpus({0}));
  CudaRunReport report;
  expectOutputsClose(executor.run(inputs, &report), simtest::runOnHost(text, inputs), 0);
  // Only x.cuda0 and r took memory: the reshape and the slice are views of r.
  EXPECT_EQ(report.devices[1].memory.peakAllocatedBytes, 2 * 512);
  EXPECT_EQ(executor.kernelCacheStats().compiles + executor.kernelCacheStats().hits, 1);
}

TEST(CudaExecutorTest, PeerToPeerCopyBetweenTwoGpusMatchesTheHost) {
  GXC_REQUIRE_GPUS(2);
  auto graph = simtest::parse(simtest::kVeryBigModule);
  auto inputs = simtest::defaultInputs(*graph);
  for (std::vector<int> map : {std::vector<int>{0, 1}, std::vector<int>{1, 0}}) {
    CudaExecutor executor(*graph, gpus(map));
    CudaRunReport report;
    // Two chained GEMMs (k = 200, then 1000), each also summed in f32 by OpenBLAS on the host.
    expectOutputsCloseNormwise(
        executor.run(inputs, &report), simtest::runOnHost(simtest::kVeryBigModule, inputs),
        2 * (gputol::gemmTolerance(DType::F32, 200) + gputol::gemmTolerance(DType::F32, 1000)));
    int canAccess = 0;
    checkCuda(cudaDeviceCanAccessPeer(&canAccess, map[1], map[0]), "peer query");
    EXPECT_EQ(executor.peerToPeer(map[0], map[1]), canAccess != 0);
    EXPECT_EQ(report.devices[1].bytesCopiedOut, 1000 * 8 * 4);  // h, to cuda:1
    EXPECT_EQ(report.devices[2].bytesCopiedIn, 1000 * 8 * 4);
  }
}

// GXC_LAUNCH_BLOCKING=1: a CUDA failure (it names a call or a stream, not where in the model)
// is reported at the layer whose work failed; gxc's own errors, which name it, are left alone.
// The rule needs no GPU; the run with it on does (below).
TEST(CudaExecutorTest, LaunchBlockingReportsACudaFailureAtItsLayer) {
  auto graph = simtest::parse(kOneGpu);
  const Op& linear = *graph->ops()[3];
  ASSERT_EQ(linear.layerName(), "l");
  try {
    attributeToLayer(linear, [] {
      throw CudaCallError(
          "CUDA error: an illegal memory access was encountered (work on stream cuda:0.compute)");
    });
    ADD_FAILURE() << "the failure was swallowed";
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), 3);
    EXPECT_EQ(error.loc(), linear.loc);
    EXPECT_EQ(error.message(),
              "layer 'l' on cuda:0: CUDA error: an illegal memory access was encountered (work on "
              "stream cuda:0.compute)");
  }
  try {
    attributeToLayer(linear, [&] { runtimeError(linear.loc, "layer 'l': already placed"); });
    ADD_FAILURE() << "the failure was swallowed";
  } catch (const Error& error) {
    EXPECT_EQ(error.message(), "layer 'l': already placed");
  }
  bool ran = false;
  attributeToLayer(linear, [&] { ran = true; });
  EXPECT_TRUE(ran);
}

// With launch blocking on, every op is waited for where it is issued: the same answers.
TEST(CudaExecutorTest, LaunchBlockingRunMatchesTheHost) {
  GXC_REQUIRE_GPUS(1);
  auto graph = simtest::parse(kOneGpu);
  auto inputs = simtest::defaultInputs(*graph);
  CudaConfig config = gpus({0});
  config.launchBlocking = true;
  CudaExecutor executor(*graph, config);
  expectOutputsCloseNormwise(executor.run(inputs), simtest::runOnHost(kOneGpu, inputs),
                             2 * gputol::gemmTolerance(DType::F32, 64));
}

// Peer access that CUDA would not enable is no reason to fail the run: those copies go
// through host memory, with a note. Decided from CUDA's answer alone: no GPU needed.
TEST(CudaExecutorTest, PeerAccessThatCannotBeEnabledFallsBackToTheHost) {
  EXPECT_EQ(peerAccessRefused(0, 1, cudaSuccess), std::nullopt);
  EXPECT_EQ(peerAccessRefused(0, 1, cudaErrorPeerAccessAlreadyEnabled), std::nullopt);
  EXPECT_EQ(peerAccessRefused(0, 1, cudaErrorTooManyPeers),
            fmt::format("GPU 1 cannot access GPU 0's memory ({}); copies from GPU 0 to GPU 1 go "
                        "through host memory",
                        cudaGetErrorString(cudaErrorTooManyPeers)));
  EXPECT_NE(peerAccessRefused(2, 3, cudaErrorPeerAccessUnsupported), std::nullopt);
}

TEST(CudaExecutorTest, CopiesStagedThroughTheHostMatchPeerToPeerOnes) {
  GXC_REQUIRE_GPUS(2);
  CudaStream stream(1, "cuda:1.d2d");
  CudaStagingBuffer staging(4096);
  std::vector<float> values(10000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  void *on0 = nullptr, *on1 = nullptr;
  {
    CudaDeviceGuard guard(0);
    checkCuda(cudaMalloc(&on0, values.size() * 4), "test buffer");
    checkCuda(cudaMemcpy(on0, values.data(), values.size() * 4, cudaMemcpyHostToDevice), "up");
  }
  {
    CudaDeviceGuard guard(1);
    checkCuda(cudaMalloc(&on1, values.size() * 4), "test buffer");
  }
  staging.throughHost(stream, on0, on1, static_cast<int64_t>(values.size() * 4));
  stream.synchronize();
  std::vector<float> back(values.size());
  checkCuda(cudaMemcpy(back.data(), on1, back.size() * 4, cudaMemcpyDeviceToHost), "down");
  EXPECT_EQ(back, values);
  cudaFree(on0);
  cudaFree(on1);
}

}  // namespace
}  // namespace gxc
