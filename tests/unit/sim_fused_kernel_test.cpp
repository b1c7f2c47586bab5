// A fused kernel on the sim platform is priced and drawn as ONE kernel: one launch, its
// external inputs and its result as memory traffic (its inner values never touch memory),
// one span in the trace, named after the kernel and listing its members; and the same chain
// unfused, member by member, does more work.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/kernel_steps.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "runtime/param_init.h"
#include "runtime/sim/sim_executor.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

using nlohmann::json;

// A softmax with a scaling prologue and a residual tail, on cuda:0, as in attention.
const char* kChain = R"(graph @chain(%x: f32[64,256] @cpu, %r: f32[64,256] @cpu) -> (out) {
  %scaled = mul %x {scalar = 0.125} : f32[64,256] @cuda:0
  %attn = softmax %scaled {axis = -1} : f32[64,256] @cuda:0
  %out = add %attn, %r : f32[64,256] @cuda:0
  return %out
}
)";

struct SimRun {
  std::unique_ptr<Graph> graph;
  SimRunReport report;
};

SimRun runOnSim(bool fuse) {
  SimRun run{parseGraph(kChain, "chain.gxir"), {}};
  PassContext context;
  context.target = Target::of({Device::cuda(0)});
  PassManager manager;
  for (const char* pass : {"insert-copies", "fuse", "plan-memory", "assign-streams"})
    if (fuse || std::string(pass) != "fuse") manager.add(pass);
  manager.run(*run.graph, context);
  std::map<std::string, Tensor> inputs;
  for (const Value* input : run.graph->inputs())
    inputs[input->name] = defaultInput(*run.graph, *input, 0);
  SimExecutor(*run.graph, SimConfig{}).run(inputs, &run.report);
  return run;
}

std::vector<json> computeSpans(const SimRunReport& report) {
  std::vector<json> spans;
  for (const TraceSpan& span : report.trace.spans())
    if (span.lane == "cuda:0.compute")
      spans.push_back({{"name", span.name}, {"dur", span.durationUs}, {"args", span.args}});
  return spans;
}

TEST(SimFusedKernelTest, AFusedKernelIsOneLaunchOfItsExternalTraffic) {
  SimRun fused = runOnSim(true);
  KernelSteps steps(*fused.graph);
  const KernelStep& kernel = steps.stepOf(fused.graph->find("out")->producer);
  ASSERT_EQ(kernel.ops.size(), 3u);

  // Reads x and r, writes out: 3 x 64 KiB; the scaled scores and the softmax stay inside.
  const int64_t tensor = 64 * 256 * 4;
  EXPECT_EQ(kernelTrafficBytes(kernel), 3 * tensor);
  const CostTable& costs = h100SxmCosts();
  double expected = costs.kernelLaunchSeconds + 3.0 * tensor / costs.memoryBytesPerSecond;
  EXPECT_DOUBLE_EQ(simStepSeconds(kernel, Device::cuda(0)), expected);

  std::vector<json> spans = computeSpans(fused.report);
  ASSERT_EQ(spans.size(), 1u) << json(spans).dump(1);
  EXPECT_EQ(spans[0]["name"], "%out = k0 (mul, softmax, add)");
  EXPECT_NEAR(spans[0]["dur"].get<double>(), expected * 1e6, 1e-9);
  const json& args = spans[0]["args"];
  EXPECT_EQ(args["kernel"], "k0");
  EXPECT_EQ(args["bytes"], 3 * tensor);
  ASSERT_EQ(args["members"].size(), 3u);
  EXPECT_EQ(args["members"][0].get<std::string>().rfind("%scaled = mul %x.cuda0", 0), 0u);
  EXPECT_EQ(args["members"][2].get<std::string>().rfind("%out = add %attn", 0), 0u);
  // The kernel waits for both uploads (its first member's wait) and draws their arrows.
  EXPECT_TRUE(args.contains("wait")) << args.dump(1);
  EXPECT_EQ(fused.report.devices.at(1).kernels, 1);
}

TEST(SimFusedKernelTest, TheFusedChainDoesLessWorkThanTheUnfusedOne) {
  SimRun fused = runOnSim(true), unfused = runOnSim(false);
  std::vector<json> spans = computeSpans(unfused.report);
  ASSERT_EQ(spans.size(), 3u);  // three launches, each reading and writing its tensors
  EXPECT_EQ(unfused.report.devices.at(1).kernels, 3);
  auto computeUs = [](const SimRun& run) {
    double sum = 0;
    for (const json& span : computeSpans(run.report)) sum += span["dur"].get<double>();
    return sum;
  };
  const CostTable& costs = h100SxmCosts();
  const double tensor = 64 * 256 * 4;
  // Unfused: mul 2, softmax 2, add 3 tensors of traffic; fused: 3; and two launches fewer.
  double saved = 2 * costs.kernelLaunchSeconds + 4 * tensor / costs.memoryBytesPerSecond;
  EXPECT_NEAR(computeUs(unfused) - computeUs(fused), saved * 1e6, 1e-6);
  // The run is not slower; here not faster either: unfused, mul and softmax run while r is
  // still being uploaded, and add, which waits for r, costs what the fused kernel does.
  EXPECT_LE(fused.report.totalMs, unfused.report.totalMs);
}

}  // namespace
}  // namespace gxc
