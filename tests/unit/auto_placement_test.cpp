// assign-devices with --placement auto: constraints kept, small host work left on the host,
// large work sent to GPUs, and weights that fit no single device spread so each fits.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/assign_devices.h"

namespace gxc {
namespace {

PassContext autoOnGpus(int count, int64_t memoryBytes) {
  PassContext context;
  context.placement = "auto";
  std::vector<Device> devices;
  for (int i = 0; i < count; ++i) devices.push_back(Device::cuda(i));
  context.target = Target::withGpuMemory(devices, memoryBytes);
  return context;
}

// The full-size VeryBigModule with no annotations: two 7.45 GiB weights.
const char* kVeryBigModule = R"(graph @vbm(%x: f32[20000,64] @cpu) -> (y) {
  %W1 = param {init = "normal", name = "W1", seed = 0} : f32[100000,20000] @?
  %W2 = param {init = "normal", name = "W2", seed = 0} : f32[20000,100000] @?
  %h = matmul %W1, %x : f32[100000,64] @?
  %y = matmul %W2, %h : f32[20000,64] @?
  return %y
}
)";

TEST(AutoPlacementTest, SpreadsWeightsThatFitNoSingleDevice) {
  auto graph = parseGraph(kVeryBigModule, "vbm.gxir");
  std::vector<std::string> explained;
  PassContext context = autoOnGpus(2, int64_t{10} << 30);
  context.explain = [&](const std::string& line) { explained.push_back(line); };
  AssignDevicesPass().run(*graph, context);
  Device h = graph->find("h")->type.device, y = graph->find("y")->type.device;
  EXPECT_TRUE(h.isCuda() && y.isCuda() && h != y) << printGraph(*graph);
  EXPECT_EQ(graph->find("W1")->type.device, h);
  EXPECT_EQ(graph->find("W2")->type.device, y);
  ASSERT_EQ(explained.size(), 2u);
  EXPECT_NE(explained[1].find("memory rules out " + h.str()), std::string::npos) << explained[1];
  std::string once = printGraph(*graph);
  EXPECT_FALSE(AssignDevicesPass().run(*graph, context));  // idempotent
  EXPECT_EQ(printGraph(*graph), once);
}

TEST(AutoPlacementTest, KeepsSmallHostWorkOnTheHostAndSendsLargeGemmsToAGpu) {
  auto graph = parseGraph(R"(graph @g(%x: f32[4,8] @cpu, %big: f32[4096,1024] @cpu) -> (s, t) {
  %w = param {init = "ones", name = "w", seed = 0} : f32[4096,1024] @?
  %s = relu %x : f32[4,8] @?
  %t = linear %big, %w {in_features = 1024, out_features = 4096} : f32[4096,4096] @?
  return %s, %t
}
)",
                          "g.gxir");
  AssignDevicesPass().run(*graph, autoOnGpus(2, int64_t{80} << 30));
  EXPECT_EQ(graph->find("s")->type.device, Device::cpu());  // a copy would cost more
  EXPECT_TRUE(graph->find("t")->type.device.isCuda());      // 34 GFLOP: 50x faster there
}

TEST(AutoPlacementTest, NeverMovesAConstraint) {
  auto graph = parseGraph(R"(graph @g(%x: f32[4,8] @cpu) -> (s) {
  %s = relu %x : f32[4,8] @cuda:1
  return %s
}
)",
                          "g.gxir");
  AssignDevicesPass().run(*graph, autoOnGpus(2, int64_t{80} << 30));
  EXPECT_EQ(graph->find("s")->type.device, Device::cuda(1));
}

}  // namespace
}  // namespace gxc
