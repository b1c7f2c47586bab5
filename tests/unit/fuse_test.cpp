// fuse and what it changes downstream: a kernel's inner values get no memory from plan-memory
// (so the peak drops) nor from the sim allocator (which stays within the plan) nor in the host
// executor's peak, every wait of a kernel is its first member's, and the pass is idempotent on
// every model and near-linear on a 100,000-layer chain. (The expected IR is in
// tests/lit/fuse.gxir; random graphs in fuse_random_test.cpp, and through the generated
// kernels in fuse_codegen_random_test.cpp; sim pricing in sim_fused_kernel_test.cpp; the
// kernel rules of the verifier in kernel_verifier_test.cpp; outputs against the reference in
// platform_equivalence_test.cpp, whose pipeline fuses.)
#include "passes/fuse.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "ir/fused_kernel.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "passes/plan_memory.h"
#include "runtime/host/host_executor.h"
#include "runtime/param_init.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

void runPasses(Graph& graph, const std::vector<std::string>& passes,
               std::vector<Device> devices = {Device::cpu()}) {
  PassContext context;
  context.target = Target::of(std::move(devices));
  PassManager(passes).run(graph, context);
}

// A tree on cuda:0: a and b both read x, c adds them. Unfused, x, a and b are live together.
const char* kTree = R"(graph @tree(%x: f32[1024] @cpu) -> (c) {
  %a = relu %x : f32[1024] @cuda:0
  %b = exp %x : f32[1024] @cuda:0
  %c = add %a, %b : f32[1024] @cuda:0
  return %c
}
)";

TEST(FuseTest, AKernelsInnerValuesGetNoMemoryAndThePeakDrops) {
  auto unfused = parseGraph(kTree, "tree.gxir");
  runPasses(*unfused, {"insert-copies", "plan-memory"}, {Device::cuda(0)});
  auto fused = parseGraph(kTree, "tree.gxir");
  runPasses(*fused, {"insert-copies", "fuse", "plan-memory"}, {Device::cuda(0)});
  // Unfused: x.cuda0, a and b live when b is computed. Fused: x.cuda0 and c, whose buffer is
  // live from the kernel's first step (it is written while x.cuda0 is read).
  EXPECT_EQ(unfused->attrs().getInt("peak_cuda0", -1), 3 * 4096);
  EXPECT_EQ(fused->attrs().getInt("peak_cuda0", -1), 2 * 4096);
  for (const char* inner : {"a", "b"}) {
    EXPECT_EQ(kernelOf(*fused->find(inner)->producer), "k0") << inner;
    EXPECT_FALSE(fused->find(inner)->producer->attrs.has("offset")) << inner;
  }
  const Op& root = *fused->find("c")->producer;
  EXPECT_NE(root.attrs.getInt("offset", -1),
            fused->find("x.cuda0")->producer->attrs.getInt("offset", -1));
}

TEST(FuseTest, TheSimAllocatorCountsNoInnerValueAndStaysWithinThePlan) {
  auto graph = parseGraph(kTree, "tree.gxir");
  runPasses(*graph, defaultPipeline(), {Device::cuda(0)});
  ASSERT_EQ(kernelSpans(*graph).size(), 1u);
  SimConfig config;
  SimRunReport report;
  std::map<std::string, Tensor> inputs = {{"x", defaultInput(*graph, *graph->inputs()[0], 0)}};
  std::map<std::string, Tensor> outputs = SimExecutor(*graph, config).run(inputs, &report);
  ASSERT_EQ(report.devices.at(1).device, "cuda:0");
  EXPECT_EQ(report.devices[1].memory.peakAllocatedBytes, 2 * 4096);  // a and b would make it 4
  // The values are still computed: c = relu(x) + exp(x).
  const Tensor& x = inputs.at("x");
  for (int64_t i = 0; i < 1024; ++i) {
    double expected = std::max(0.0, static_cast<double>(x.loadFloat(i))) + std::exp(x.loadFloat(i));
    EXPECT_NEAR(outputs.at("c").loadFloat(i), expected, 1e-6 * std::max(1.0, expected));
  }
}

TEST(FuseTest, TheHostExecutorsArenaHoldsNoInnerValue) {
  std::string hostTree = kTree;
  for (size_t at = hostTree.find("@cuda:0"); at != std::string::npos; at = hostTree.find("@cuda:0"))
    hostTree.replace(at, 7, "@cpu");
  auto statsOf = [&](bool fuse) {
    auto graph = parseGraph(hostTree, "tree.gxir");
    runPasses(*graph, fuse ? std::vector<std::string>{"fuse", "plan-memory"}
                           : std::vector<std::string>{"plan-memory"});
    std::map<std::string, Tensor> inputs = {{"x", defaultInput(*graph, *graph->inputs()[0], 0)}};
    HostRunStats stats;
    HostExecutor(*graph).run(inputs, &stats);
    return stats;
  };
  EXPECT_EQ(statsOf(false).arenaBytes, 3 * 4096);  // a, b and c, live together when c is made
  EXPECT_EQ(statsOf(false).peakBytes, 4 * 4096);   // and the input x
  EXPECT_EQ(statsOf(true).arenaBytes, 4096);       // c alone
  EXPECT_EQ(statsOf(true).peakBytes, 2 * 4096);
}

// A kernel on cuda:0 whose second member reads a copy the first does not: the kernel launches
// once, so its first member waits for both copies.
const char* kTwoCopies = R"(graph @two_copies(%x: f32[64] @cpu, %z: f32[64] @cpu) -> (c) {
  %a = exp %x : f32[64] @cuda:0
  %c = add %a, %z : f32[64] @cuda:0
  return %c
}
)";

TEST(FuseTest, EveryWaitOfAKernelIsItsFirstMembers) {
  auto graph = parseGraph(kTwoCopies, "two_copies.gxir");
  runPasses(*graph, {"insert-copies", "fuse", "assign-streams"}, {Device::cuda(0)});
  const Op& first = *graph->find("a")->producer;
  const Op& root = *graph->find("c")->producer;
  EXPECT_EQ(kernelOf(first), "k0");
  EXPECT_EQ(kernelOf(root), "k0");
  EXPECT_EQ(first.attrs.getString("stream", ""), "cuda:0.compute");
  EXPECT_EQ(root.attrs.getString("stream", ""), "cuda:0.compute");
  // Both copies run on cuda:0.h2d, z's after x's: z's event covers both.
  EXPECT_EQ(first.attrs.getIntList("wait"), std::vector<int64_t>({0}));
  EXPECT_EQ(graph->find("z.cuda0")->producer->attrs.getInt("record", -1), 0);
  EXPECT_FALSE(root.attrs.has("wait"));
  EXPECT_TRUE(root.attrs.has("record"));  // read by the copy back to the host
}

// Models small enough to run here (very_big_module's weights are 16 GB).
std::vector<std::string> modelPaths(bool runnableOnly) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(std::string(GXC_SOURCE_DIR) + "/models")) {
    if (entry.path().extension() != ".yaml") continue;
    if (runnableOnly && entry.path().filename().string() == "very_big_module.yaml") continue;
    paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

bool annotationsFit(const Graph& graph, int gpus) {
  for (const Op* op : graph.ops())
    if (op->device().isCuda() && op->device().index >= gpus) return false;
  return true;
}

TEST(FuseTest, IsIdempotentOnEveryModelAndFusesSome) {
  int kernels = 0;
  for (const std::string& path : modelPaths(false))
    for (int gpus : {0, 1, 2}) {
      SCOPED_TRACE(path + " on " + std::to_string(gpus) + " GPUs");
      auto graph = loadModel(path);
      if (!annotationsFit(*graph, gpus)) continue;
      std::vector<Device> devices;
      for (int i = 0; i < gpus; ++i) devices.push_back(Device::cuda(i));
      if (gpus == 0) devices = {Device::cpu()};
      runPasses(*graph, defaultPipeline(), devices);
      kernels += static_cast<int>(kernelSpans(*graph).size());
      std::string once = printGraph(*graph);
      EXPECT_FALSE(FusePass().run(*graph, PassContext{}));
      EXPECT_EQ(printGraph(*graph), once);
    }
  EXPECT_GT(kernels, 0);
}

TEST(FuseTest, ModelsRunWithinThePlanOnTheSimAllocator) {
  for (const std::string& path : modelPaths(true))
    for (int gpus : {1, 2}) {
      SCOPED_TRACE(path + " on " + std::to_string(gpus) + " GPUs");
      auto graph = loadModel(path);
      if (!annotationsFit(*graph, gpus)) continue;
      std::vector<Device> devices;
      for (int i = 0; i < gpus; ++i) devices.push_back(Device::cuda(i));
      runPasses(*graph, defaultPipeline(), devices);
      SimConfig config;
      config.gpus = gpus;
      SimRunReport report;
      std::map<std::string, Tensor> inputs;
      for (const Value* input : graph->inputs())
        inputs[input->name] = defaultInput(*graph, *input, graph->attrs().getInt("seed", 0));
      SimExecutor(*graph, config).run(inputs, &report);
      for (const SimDeviceReport& device : report.devices) {
        int64_t planned = graph->attrs().getInt(peakAttrName(*parseDevice(device.device)), 0);
        EXPECT_LE(device.memory.peakAllocatedBytes, planned) << device.device;
      }
    }
}

TEST(FuseTest, ALongElementwiseChainIsOneKernel) {
  // The bench's 100,000-layer chain: grouping merges the smaller member list into the larger,
  // so this stays near-linear.
  Graph graph("long");
  Value* value = graph.addInput("x", TensorType::of(DType::F32, {1024}, Device::cuda(0)));
  for (int i = 0; i < 100000; ++i)
    value = graph
                .appendOp(i % 2 ? OpKind::Relu : OpKind::Tanh, {value}, "r" + std::to_string(i),
                          value->type)
                ->result;
  graph.addOutput("y", value);
  runPasses(graph, {"fuse", "plan-memory"}, {Device::cuda(0)});
  std::vector<KernelSpan> spans = kernelSpans(graph);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].last - spans[0].first + 1, 100000u);
  EXPECT_EQ(graph.attrs().getInt("peak_cuda0", -1), 2 * 4096);  // x and y
}

}  // namespace
}  // namespace gxc
