// assign-devices against runs with GPUs, which no platform of this build offers yet: the
// pass only sees a PassContext, so its GPU rules are tested here directly.
#include "passes/assign_devices.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"

namespace gxc {
namespace {

const char* kModel = R"(graph @g(%x: f32[4,4] @cpu) -> (z) {
  %w = param {init = "zeros", name = "w", seed = 0} : f32[4,4] @?
  %h = matmul %w, %x : f32[4,4] @cuda:1 loc("m.yaml":5:3)
  %z = relu %h : f32[4,4] @? loc("m.yaml":6:3)
  return %z
}
)";

PassContext gpus(int count) {
  PassContext context;
  std::vector<Device> devices;
  for (int i = 0; i < count; ++i) devices.push_back(Device::cuda(i));
  context.target = Target::of(devices);
  return context;
}

TEST(AssignDevicesTest, KeepsAnnotationsAndSendsTheRestToTheFirstDevice) {
  auto graph = parseGraph(kModel, "g.gxir");
  EXPECT_TRUE(AssignDevicesPass().run(*graph, gpus(2)));
  EXPECT_EQ(graph->find("h")->type.device, Device::cuda(1));
  EXPECT_EQ(graph->find("z")->type.device, Device::cuda(0));
  EXPECT_EQ(graph->find("w")->type.device, Device::cuda(1));  // follows its consumer
  EXPECT_EQ(graph->find("x")->type.device, Device::cpu());
  std::string once = printGraph(*graph);
  EXPECT_FALSE(AssignDevicesPass().run(*graph, gpus(2)));  // idempotent
  EXPECT_EQ(printGraph(*graph), once);
}

TEST(AssignDevicesTest, DeviceBeyondTheRunIsAnErrorNamingLayerAndDevices) {
  auto graph = parseGraph(kModel, "g.gxir");
  try {
    AssignDevicesPass().run(*graph, gpus(1));
    FAIL() << "cuda:1 accepted on a one-GPU run";
  } catch (const Error& error) {
    EXPECT_EQ(formatError(error),
              "m.yaml:5:3: error: layer 'h' is placed on cuda:1 but the run's devices are cuda:0");
  }
}

TEST(AssignDevicesTest, HostOnlyRunFallsBackOnceWithANote) {
  auto graph = parseGraph(kModel, "g.gxir");
  std::vector<std::string> notes;
  PassContext context;
  context.note = [&](const std::string& text) { notes.push_back(text); };
  AssignDevicesPass().run(*graph, context);
  EXPECT_EQ(graph->find("h")->type.device, Device::cpu());
  EXPECT_EQ(notes.size(), 1u);
}

}  // namespace
}  // namespace gxc

namespace gxc {
namespace {

TEST(AssignDevicesTest, ReplicatesAnUnannotatedParamOncePerConsumingDevice) {
  auto graph = parseGraph(R"(graph @g(%x: f32[4,4] @cpu) -> (c) {
  %w = param {init = "ones", name = "w", seed = 0} : f32[4,4] @?
  %v = param {init = "ones", name = "v", seed = 0} : f32[4,4] @cuda:0
  %a = matmul %w, %x : f32[4,4] @cuda:0
  %b = matmul %w, %a : f32[4,4] @cuda:1
  %c = matmul %w, %b : f32[4,4] @cuda:1
  %d = matmul %v, %c : f32[4,4] @cuda:1
  return %c
}
)",
                          "g.gxir");
  PassContext context;
  context.target = Target::of({Device::cuda(0), Device::cuda(1)});
  EXPECT_TRUE(AssignDevicesPass().run(*graph, context));
  Value* replica = graph->find("w.cuda1");
  ASSERT_NE(replica, nullptr);
  EXPECT_EQ(replica->type.device, Device::cuda(1));
  EXPECT_EQ(replica->producer->attrs.getString("name", ""), "w");
  EXPECT_EQ(graph->find("a")->producer->operands[0], graph->find("w"));
  EXPECT_EQ(graph->find("b")->producer->operands[0], replica);
  EXPECT_EQ(graph->find("c")->producer->operands[0], replica);  // one replica per device
  EXPECT_EQ(graph->find("v")->type.device, Device::cuda(0));    // annotated: stays
  std::string once = printGraph(*graph);
  EXPECT_FALSE(AssignDevicesPass().run(*graph, context));
  EXPECT_EQ(printGraph(*graph), once);
}

}  // namespace
}  // namespace gxc
