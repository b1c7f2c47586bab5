// The sim executor on hand-written scheduled graphs: the same numbers as the host oracle,
// the report's copies and memory, the trace's lanes and simulated times, the device map, and
// staging buffers pinned once. (Failures are in sim_executor_errors_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "runtime/sim/sim_executor.h"
#include "sim_test_graphs.h"

namespace gxc {
namespace {

using nlohmann::json;
using simtest::kFourBranches;
using simtest::kVeryBigModule;

constexpr int64_t kMiB = 1 << 20;

void expectSameTensors(const std::map<std::string, Tensor>& actual,
                       const std::map<std::string, Tensor>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [name, tensor] : expected) {
    ASSERT_TRUE(actual.count(name)) << name;
    const Tensor& got = actual.at(name);
    ASSERT_EQ(got.dtype(), tensor.dtype()) << name;
    ASSERT_EQ(got.shape(), tensor.shape()) << name;
    // The same kernels on the same data: equal to the bit.
    EXPECT_EQ(got.toFloats(), tensor.toFloats()) << name;
  }
}

SimConfig gpus(int count) {
  SimConfig config;
  config.gpus = count;
  return config;
}

const SimDeviceReport& reportOf(const SimRunReport& report, const std::string& device) {
  for (const SimDeviceReport& entry : report.devices)
    if (entry.device == device) return entry;
  throw std::runtime_error("no report for " + device);
}

// The trace's complete spans by name, and the lane (thread name) and process of each.
struct ParsedTrace {
  std::map<std::string, json> spans;
  std::map<std::pair<int, int>, std::string> laneNames;
  std::map<int, std::string> processNames;
  int flows = 0;

  explicit ParsedTrace(const ChromeTrace& trace) {
    json parsed = json::parse(trace.str());
    for (const json& event : parsed.at("traceEvents")) {
      if (event.at("ph") == "X") spans[event.at("name")] = event;
      if (event.at("ph") == "s") ++flows;
      if (event.at("ph") == "M" && event.at("name") == "thread_name")
        laneNames[{event.at("pid"), event.at("tid")}] = event.at("args").at("name");
      if (event.at("ph") == "M" && event.at("name") == "process_name")
        processNames[event.at("pid")] = event.at("args").at("name");
    }
  }
  std::string lane(const std::string& span) const {
    const json& s = spans.at(span);
    return laneNames.at({s.at("pid"), s.at("tid")});
  }
  double start(const std::string& span) const { return spans.at(span).at("ts"); }
  double end(const std::string& span) const {
    return spans.at(span).at("ts").get<double>() + spans.at(span).at("dur").get<double>();
  }
};

TEST(SimExecutorTest, VeryBigModuleOnTwoGpusMatchesTheHost) {
  auto graph = simtest::parse(kVeryBigModule);
  auto inputs = simtest::defaultInputs(*graph);
  SimExecutor executor(*graph, gpus(2));
  expectSameTensors(executor.run(inputs), simtest::runOnHost(kVeryBigModule, inputs));
}

TEST(SimExecutorTest, ReportCountsCopiesAndMemoryPerDevice) {
  auto graph = simtest::parse(kVeryBigModule);
  SimExecutor executor(*graph, gpus(2));
  SimRunReport report;
  executor.run(simtest::defaultInputs(*graph), &report);
  ASSERT_EQ(report.devices.size(), 3u);
  const SimDeviceReport& cpu = reportOf(report, "cpu");
  const SimDeviceReport& gpu0 = reportOf(report, "cuda:0");
  const SimDeviceReport& gpu1 = reportOf(report, "cuda:1");
  // x (200x8 f32) goes up to cuda:0, h (1000x8) across to cuda:1, y (200x8) down to the host.
  EXPECT_EQ(cpu.copiesOut, 1);
  EXPECT_EQ(cpu.bytesCopiedOut, 6400);
  EXPECT_EQ(cpu.copiesIn, 1);
  EXPECT_EQ(cpu.bytesCopiedIn, 6400);
  EXPECT_EQ(gpu0.copiesIn, 1);
  EXPECT_EQ(gpu0.bytesCopiedIn, 6400);
  EXPECT_EQ(gpu0.copiesOut, 1);
  EXPECT_EQ(gpu0.bytesCopiedOut, 32000);
  EXPECT_EQ(gpu1.copiesIn, 1);
  EXPECT_EQ(gpu1.bytesCopiedIn, 32000);
  EXPECT_EQ(gpu1.copiesOut, 1);
  EXPECT_EQ(gpu1.bytesCopiedOut, 6400);
  EXPECT_EQ(gpu0.kernels, 1);
  EXPECT_EQ(gpu1.kernels, 1);
  EXPECT_EQ(gpu0.virtualGpu, 0);
  EXPECT_EQ(cpu.virtualGpu, -1);
  // Params are the load, not copies: 1000x200 f32 on each GPU.
  EXPECT_EQ(gpu0.uploadedBytes, 800000);
  EXPECT_EQ(gpu1.uploadedBytes, 800000);
  // On cuda:0: W1 in a 2 MiB segment, and the arena of x.cuda0 and h (each rounded to 512 B)
  // in a segment of exactly its size, which stays for the next run; the host keeps its arena
  // (y.cpu), not the input.
  EXPECT_EQ(gpu0.memory.peakAllocatedBytes, 800256 + 6656 + 32256);
  EXPECT_EQ(gpu1.memory.peakAllocatedBytes, 800256 + 32256 + 6656);
  EXPECT_EQ(gpu0.memory.peakReservedBytes, 2 * kMiB + 6656 + 32256);
  EXPECT_EQ(gpu0.memory.peakArenaReservedBytes, 6656 + 32256);
  EXPECT_EQ(gpu0.memory.peakArenaReservedBytes, graph->attrs().getInt("arena_cuda0", -1));
  EXPECT_EQ(gpu0.memory.deviceAllocations, 2);
  EXPECT_EQ(gpu0.memory.allocatedBytes, 800256 + 6656 + 32256);
  EXPECT_EQ(executor.memoryStats(Device::cuda(1)).allocatedBytes, 800256 + 32256 + 6656);
  EXPECT_EQ(cpu.memory.allocatedBytes, 6656);
}

TEST(SimExecutorTest, TraceHasALanePerStreamAndRespectsDependencies) {
  auto graph = simtest::parse(kVeryBigModule);
  SimExecutor executor(*graph, gpus(2));
  SimRunReport report;
  executor.run(simtest::defaultInputs(*graph), &report);
  ParsedTrace trace(report.trace);
  std::vector<std::string> lanes;
  for (const auto& [where, name] : trace.laneNames) lanes.push_back(name);
  std::sort(lanes.begin(), lanes.end());
  EXPECT_EQ(lanes, (std::vector<std::string>{"cuda:0.compute", "cuda:0.h2d", "cuda:1.compute",
                                             "cuda:1.d2d", "cuda:1.d2h"}));
  EXPECT_EQ(trace.lane("%h = matmul"), "cuda:0.compute");
  EXPECT_EQ(trace.processNames.at(trace.spans.at("%h = matmul").at("pid")), "cuda:0 (sim GPU 0)");
  EXPECT_EQ(trace.lane("%h.cuda1 = copy"), "cuda:1.d2d");
  EXPECT_EQ(trace.lane("%y = matmul"), "cuda:1.compute");
  EXPECT_EQ(trace.processNames.at(trace.spans.at("%y = matmul").at("pid")), "cuda:1 (sim GPU 1)");
  EXPECT_EQ(trace.spans.at("%y = matmul").at("args").at("op"),
            "%y = matmul %W2, %h.cuda1 {offset = 32256, record = 3, stream = \"cuda:1.compute\", "
            "wait = [2]} : "
            "f32[200,8] @cuda:1");
  // Each op starts when what it waits for has ended, not before, and not later than that.
  EXPECT_EQ(trace.start("%x.cuda0 = copy"), 0.0);
  EXPECT_DOUBLE_EQ(trace.start("%h = matmul"), trace.end("%x.cuda0 = copy"));
  EXPECT_DOUBLE_EQ(trace.start("%h.cuda1 = copy"), trace.end("%h = matmul"));
  EXPECT_DOUBLE_EQ(trace.start("%y = matmul"), trace.end("%h.cuda1 = copy"));
  EXPECT_DOUBLE_EQ(trace.start("%y.cpu = copy"), trace.end("%y = matmul"));
  EXPECT_EQ(trace.flows, 4);  // one arrow per event wait
  EXPECT_DOUBLE_EQ(report.totalMs * 1e3, trace.end("%y.cpu = copy"));
}

TEST(SimExecutorTest, SimulatedTimesAreTheCostModelsAndDeterministic) {
  auto graph = simtest::parse(kVeryBigModule);
  SimExecutor executor(*graph, gpus(2));
  SimRunReport first, second;
  auto inputs = simtest::defaultInputs(*graph);
  executor.run(inputs, &first);
  executor.run(inputs, &second);
  const double us = 1e6;
  const CostTable& costs = h100SxmCosts();
  // x (6400 B) fits one staging chunk: the memcpy into the pinned buffer, then the DMA.
  double upload = 6400 / costs.hostMemcpyBytesPerSecond + 5e-6 + 6400 / 40e9;
  const Graph& g = *graph;
  double matmul1 = simOpSeconds(*g.find("h")->producer, Device::cuda(0));
  double across = 5e-6 + 32000 / 380e9;
  double matmul2 = simOpSeconds(*g.find("y")->producer, Device::cuda(1));
  // Toward the host the DMA first, then the memcpy out of the buffer.
  double download = 5e-6 + 6400 / 40e9 + 6400 / costs.hostMemcpyBytesPerSecond;
  // The GEMMs are small: 8 of their 1000 rows' tiles keep 8 of 132 SMs busy, so their math
  // outlasts their operands' trip over HBM.
  EXPECT_DOUBLE_EQ(matmul1, 5e-6 + gemmComputeSeconds({1, 1000, 8, 200}, DType::F32, costs));
  EXPECT_GT(matmul1, 5e-6 + (800000 + 6400 + 32000) / 3.0e12);
  ParsedTrace trace(first.trace);
  EXPECT_NEAR(trace.end("%x.cuda0 = copy"), upload * us, 1e-9);
  EXPECT_NEAR(trace.end("%h = matmul"), (upload + matmul1) * us, 1e-9);
  EXPECT_NEAR(first.totalMs, (upload + matmul1 + across + matmul2 + download) * 1e3, 1e-12);
  EXPECT_NEAR(reportOf(first, "cuda:0").busyMs, (upload + matmul1) * 1e3, 1e-12);
  EXPECT_EQ(first.trace.str(), second.trace.str());
}

TEST(SimExecutorTest, IndependentBranchesOnFourGpusOverlapAndMatchTheHost) {
  auto graph = simtest::parse(kFourBranches);
  auto inputs = simtest::defaultInputs(*graph);
  SimExecutor executor(*graph, gpus(4));
  SimRunReport report;
  expectSameTensors(executor.run(inputs, &report), simtest::runOnHost(kFourBranches, inputs));
  ParsedTrace trace(report.trace);
  // The four linears run at the same simulated time on four GPUs...
  for (int i = 1; i < 4; ++i) {
    std::string name = "%l" + std::to_string(i) + " = linear";
    EXPECT_LT(trace.start(name), trace.end("%l0 = linear")) << name;
    EXPECT_LT(trace.start("%l0 = linear"), trace.end(name)) << name;
  }
  // ...and the gathering copies wait for their producers on the other GPUs.
  // (The trace's microseconds are sums, so equal times may differ in the last bit.)
  EXPECT_GE(trace.start("%r1.cuda0 = copy") + 1e-9, trace.end("%r1 = relu"));
  EXPECT_GE(trace.start("%r3.cuda0 = copy") + 1e-9, trace.end("%r3 = sigmoid"));
  EXPECT_GE(trace.start("%sum = add") + 1e-9, trace.end("%r3.cuda0 = copy"));
  EXPECT_EQ(reportOf(report, "cuda:0").copiesIn, 4);  // x and three branches
  EXPECT_EQ(reportOf(report, "cuda:3").copiesOut, 2);
  EXPECT_EQ(reportOf(report, "cpu").copiesIn, 2);
}

TEST(SimExecutorTest, BusyIsTheUnionOfADevicesStreamsNotTheirSum) {
  auto graph = simtest::parse(kFourBranches);
  SimExecutor executor(*graph, gpus(4));
  SimRunReport report;
  executor.run(simtest::defaultInputs(*graph), &report);
  ParsedTrace trace(report.trace);
  // On cuda:0, s01 (compute) runs while r2 crosses from cuda:2 (d2d): the spans overlap.
  EXPECT_LT(trace.start("%r2.cuda0 = copy"), trace.end("%s01 = add"));
  EXPECT_LT(trace.start("%s01 = add"), trace.end("%r2.cuda0 = copy"));
  double summed = 0;
  for (const auto& [name, span] : trace.spans)
    if (trace.processNames.at(span.at("pid")).rfind("cuda:0 ", 0) == 0)
      summed += span.at("dur").get<double>() / 1e3;
  const SimDeviceReport& gpu0 = reportOf(report, "cuda:0");
  EXPECT_LT(gpu0.busyMs, summed - 1e-6);
  for (const SimDeviceReport& device : report.devices) {
    EXPECT_LE(device.busyMs, device.finishMs) << device.device;
    EXPECT_LE(device.finishMs, report.totalMs) << device.device;
  }
  EXPECT_GT(gpu0.busyMs, 0);
}

TEST(SimExecutorTest, ARunThatStaysOnTheHostTakesSimulatedTime) {
  auto graph = simtest::parse(R"(
graph @host(%x: f32[64,13] @cpu) -> (y) attributes {seed = 0} {
  %w = param {init = "normal", name = "w", seed = 0} : f32[16,13] @cpu
  %l = linear %x, %w {in_features = 13, out_features = 16, stream = "cpu.compute"} : f32[64,16] @cpu
  %y = relu %l {stream = "cpu.compute"} : f32[64,16] @cpu
  return %y
}
)");
  SimExecutor executor(*graph, gpus(2));
  SimRunReport report;
  executor.run(simtest::defaultInputs(*graph), &report);
  const Graph& g = *graph;
  double expected = simOpSeconds(*g.find("l")->producer, Device::cpu()) +
                    simOpSeconds(*g.find("y")->producer, Device::cpu());
  EXPECT_GE(expected, 2 * h100SxmCosts().hostOpSeconds);
  EXPECT_NEAR(report.totalMs, expected * 1e3, 1e-12);
  EXPECT_NEAR(reportOf(report, "cpu").busyMs, expected * 1e3, 1e-12);
  EXPECT_EQ(reportOf(report, "cuda:0").busyMs, 0);
}

TEST(SimExecutorTest, TheDeviceMapPicksWhichGpuIsWhich) {
  auto graph = simtest::parse(kVeryBigModule);
  auto inputs = simtest::defaultInputs(*graph);
  SimConfig swapped = gpus(2);
  swapped.deviceMap = {1, 0};  // --devices 1,0
  SimExecutor executor(*graph, swapped);
  SimRunReport report;
  expectSameTensors(executor.run(inputs, &report), simtest::runOnHost(kVeryBigModule, inputs));
  EXPECT_EQ(reportOf(report, "cuda:0").virtualGpu, 1);
  EXPECT_EQ(reportOf(report, "cuda:1").virtualGpu, 0);
  ParsedTrace trace(report.trace);
  EXPECT_EQ(trace.processNames.at(trace.spans.at("%h = matmul").at("pid")), "cuda:0 (sim GPU 1)");
}

TEST(SimExecutorTest, StagingBuffersArePinnedOnceAndReused) {
  auto graph = simtest::parse(kVeryBigModule);
  auto inputs = simtest::defaultInputs(*graph);
  auto expected = simtest::runOnHost(kVeryBigModule, inputs);
  SimConfig config = gpus(2);
  config.stagingChunkBytes = 4096;  // params (800 KB) and x (6400 B) move in several chunks
  SimExecutor executor(*graph, config);
  SimRunReport report;
  expectSameTensors(executor.run(inputs, &report), expected);
  // GPU 0 host-to-device, GPU 1 host-to-device (its param), GPU 1 device-to-host.
  EXPECT_EQ(executor.pinnedAllocations(), 3);
  for (int i = 0; i < 3; ++i) expectSameTensors(executor.run(inputs), expected);
  EXPECT_EQ(executor.pinnedAllocations(), 3);
  // Two chunks through the two buffers: chunk 1's memcpy runs during chunk 0's DMA, so the
  // copy is chunk 0's memcpy, both DMAs, two latencies.
  ParsedTrace trace(report.trace);
  double memcpy0 = 4096 / h100SxmCosts().hostMemcpyBytesPerSecond;
  EXPECT_NEAR(trace.end("%x.cuda0 = copy"), (memcpy0 + 2 * 5e-6 + 6400 / 40e9) * 1e6, 1e-9);
}

TEST(SimExecutorTest, RepeatedRunsReuseTheArenaAndReleaseCachedKeepsParamsAndArenas) {
  auto graph = simtest::parse(kVeryBigModule);
  auto inputs = simtest::defaultInputs(*graph);
  SimExecutor executor(*graph, gpus(2));
  for (int i = 0; i < 3; ++i) {
    SimRunReport report;
    executor.run(inputs, &report);
    const MemoryStats& gpu = reportOf(report, "cuda:0").memory;
    EXPECT_EQ(gpu.peakAllocatedBytes, 800256 + 6656 + 32256);
    EXPECT_EQ(gpu.deviceAllocations, 2);   // the param's segment and the arena, once
    EXPECT_EQ(gpu.allocationRequests, 2);  // no activation is ever allocated by itself
  }
  executor.releaseCached();
  MemoryStats stats = executor.memoryStats(Device::cuda(0));
  EXPECT_EQ(stats.allocatedBytes, 800256 + 38912);
  EXPECT_EQ(stats.reservedBytes, 2 * kMiB + 38912);  // the param's segment and the arena stay
  EXPECT_EQ(executor.memoryStats(Device::cpu()).allocatedBytes, 6656);  // the host's arena
  EXPECT_EQ(executor.memoryStats(Device::cpu()).reservedBytes, 6656);   // the input's is gone
}

}  // namespace
}  // namespace gxc
