// The plan that runs is the plan printed: on every model of models/ (but the full-size
// very_big_module, whose weights are 16 GB), on the cpu platform and on 1 and 2 virtual GPUs
// with several placements, the memory the executors reserve for activations is exactly
// plan-memory's arena on every device, no activation is allocated anywhere else, and the
// outputs still equal the reference executor's. The data really lives at the planned offsets:
// a plan edited to put a value over one still live corrupts the outputs, on both platforms.
// The schedule check (runtime/schedule.h) refuses a reuse of arena bytes no event orders.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_compare.h"
#include "runnable_models.h"

#include "frontend/model_loader.h"
#include "ir/memory_attrs.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string model;  // file name in models/
  int gpus = 0;       // 0: the cpu platform
  std::string placement = "manual";
  int microbatches = 0;
};

std::string caseName(const testing::TestParamInfo<Case>& info) {
  std::string name =
      fs::path(info.param.model).stem().string() + "_" +
      (info.param.gpus == 0 ? "cpu"
                            : std::to_string(info.param.gpus) + "gpus_" + info.param.placement);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

using testing_models::annotationsFit;
using testing_models::runnableModels;

// Every device count the model's annotations fit: a case that cannot run is not made.
std::vector<Case> cases() {
  std::vector<Case> all;
  for (const std::string& model : runnableModels()) {
    auto graph = loadModel(std::string(GXC_SOURCE_DIR) + "/models/" + model);
    all.push_back({model, 0});
    if (annotationsFit(*graph, 1)) all.push_back({model, 1});
    all.push_back({model, 2});
    all.push_back({model, 2, "auto"});
    all.push_back({model, 2, "pipeline", 4});
  }
  return all;
}

// The model compiled for the case's devices.
std::unique_ptr<Graph> compiled(const Case& c) {
  auto graph = loadModel(std::string(GXC_SOURCE_DIR) + "/models/" + c.model);
  std::vector<Device> devices;
  for (int i = 0; i < c.gpus; ++i) devices.push_back(Device::cuda(i));
  if (c.gpus == 0) devices.push_back(Device::cpu());
  PassContext context;
  context.target = Target::of(std::move(devices));
  context.placement = c.placement;
  context.microbatches = c.microbatches;
  PassManager(defaultPipeline()).run(*graph, context);
  return graph;
}

std::map<std::string, Tensor> inputsOf(const Graph& graph) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] = defaultInput(graph, *input, graph.attrs().getInt("seed", 0));
  return inputs;
}

int64_t plannedArena(const Graph& graph, const Device& device) {
  return graph.attrs().getInt(arenaAttrName(device), -1);
}

class ExecutedPlanTest : public testing::TestWithParam<Case> {};

TEST_P(ExecutedPlanTest, ActivationsReserveExactlyThePlannedArenaAndMatchTheReference) {
  const Case& c = GetParam();
  auto graph = compiled(c);
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  std::map<std::string, Tensor> expected = ReferenceExecutor(*graph).run(inputs);

  if (c.gpus == 0) {
    HostExecutor executor(*graph);
    HostRunStats stats;
    expectOutputsCloseNormwise(executor.run(inputs, &stats), expected, 1e-5);
    EXPECT_EQ(stats.arenaBytes, plannedArena(*graph, Device::cpu()));
    EXPECT_GT(stats.arenaBytes, 0);
    return;
  }

  SimConfig config;
  config.gpus = c.gpus;
  config.memoryPerGpu = int64_t{1} << 30;
  SimExecutor executor(*graph, config);
  SimRunReport first, second;
  expectOutputsCloseNormwise(executor.run(inputs, &first), expected, 1e-5);
  expectOutputsCloseNormwise(executor.run(inputs, &second), expected, 1e-5);
  for (size_t d = 0; d < second.devices.size(); ++d) {
    const SimDeviceReport& device = second.devices[d];
    SCOPED_TRACE(device.device);
    Device which = *parseDevice(device.device);
    int64_t planned = graph->attrs().has(arenaAttrName(which)) ? plannedArena(*graph, which) : 0;
    EXPECT_EQ(device.memory.peakArenaReservedBytes, planned);
    // Nothing else is allocated for activations: a run asks its allocator for its inputs
    // there and for nothing more.
    int64_t inputsHere = 0;
    for (const Value* input : graph->inputs())
      if (input->type.device == which) ++inputsHere;
    EXPECT_EQ(device.memory.allocationRequests - first.devices[d].memory.allocationRequests,
              inputsHere);
  }
}

// plan-memory reuses bytes only where the streams are ordered already, so the waits that
// assign-streams adds for reused bytes are none: the schedule is the one the dependencies
// alone give, as if nothing shared bytes.
TEST_P(ExecutedPlanTest, ReusedBytesNeedNoWaitBetweenStreams) {
  auto graph = compiled(GetParam());
  auto unshared = parseGraph(printGraph(*graph), "unshared.gxir");
  for (Op* op : unshared->ops()) op->attrs.erase("offset");
  PassManager manager;
  manager.add("assign-streams");
  manager.run(*unshared, PassContext{});
  ASSERT_EQ(unshared->ops().size(), graph->ops().size());
  for (size_t i = 0; i < graph->ops().size(); ++i) {
    const Op& planned = *graph->ops()[i];
    const Op& alone = *unshared->ops()[i];
    EXPECT_EQ(planned.attrs.getIntList("wait"), alone.attrs.getIntList("wait"))
        << planned.layerName();
    EXPECT_EQ(planned.attrs.getInt("record", -1), alone.attrs.getInt("record", -1))
        << planned.layerName();
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExecutedPlanTest, testing::ValuesIn(cases()), caseName);

// Moves one activation over the bytes of another that is still to be read: the plan is wrong,
// and the run must show it.
void corruptPlan(Graph& graph, const Device& device) {
  std::map<const Value*, std::pair<size_t, size_t>> lifetime;  // first and last op index
  const auto& ops = graph.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->attrs.has("offset") && ops[i]->kind != OpKind::Reshape)
      lifetime[ops[i]->result] = {i, i};
    for (const Value* operand : ops[i]->operands)
      if (lifetime.count(operand)) lifetime[operand].second = i;
  }
  std::set<const Value*> viewed;  // moving these would move their views' bytes too
  for (const Op* op : ops)
    if (op->kind == OpKind::Reshape || op->kind == OpKind::Slice) viewed.insert(op->operands[0]);
  for (size_t i = 0; i < ops.size(); ++i) {
    Op* late = ops[i];
    if (!lifetime.count(late->result) || late->device() != device || viewed.count(late->result))
      continue;
    for (const auto& [early, span] : lifetime) {
      // Written before `late`, read after it, at least as large: `late` overwrites it.
      if (early->type.device != device || span.first >= i || span.second <= i ||
          early->type.bytes() < late->result->type.bytes())
        continue;
      late->attrs.set("offset", early->producer->attrs.getInt("offset", 0));
      return;
    }
  }
  FAIL() << "no activation on " << device.str() << " is written while another is live";
}

TEST(ExecutedPlanTest, AWrongOffsetCorruptsTheOutputsOnTheHost) {
  auto graph = compiled({"transformer_block.yaml", 0});
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  std::map<std::string, Tensor> expected = ReferenceExecutor(*graph).run(inputs);
  corruptPlan(*graph, Device::cpu());
  std::map<std::string, Tensor> actual = HostExecutor(*graph).run(inputs);
  bool differs = false;
  for (const auto& [name, want] : expected)
    differs |= actual.at(name).toFloats() != want.toFloats();
  EXPECT_TRUE(differs);
}

TEST(ExecutedPlanTest, AWrongOffsetCorruptsTheOutputsOnAVirtualGpu) {
  auto graph = compiled({"transformer_block.yaml", 1});
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  std::map<std::string, Tensor> expected = ReferenceExecutor(*graph).run(inputs);
  corruptPlan(*graph, Device::cuda(0));
  SimConfig config;
  config.memoryPerGpu = int64_t{1} << 30;
  config.launchBlocking = true;  // one op at a time: the corruption, not a race, is tested
  std::map<std::string, Tensor> actual = SimExecutor(*graph, config).run(inputs);
  bool differs = false;
  for (const auto& [name, want] : expected)
    differs |= actual.at(name).toFloats() != want.toFloats();
  EXPECT_TRUE(differs);
}

TEST(ExecutedPlanTest, AGraphWithoutAMemoryPlanIsAGxcBug) {
  auto graph = parseGraph(R"(
graph @unplanned(%x: f32[4] @cpu) -> (y) {
  %y = relu %x : f32[4] @cpu
  return %y
}
)",
                          "unplanned.gxir");
  try {
    HostExecutor executor(*graph);
    FAIL() << "an unplanned graph was run";
  } catch (const InternalError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("graph 'unplanned' has no memory plan for cpu (no "
                        "`arena_cpu`): plan-memory did not run"),
              std::string::npos)
        << error.what();
  }
}

// h on cuda:0 is read by the copy to cuda:1 (cuda:1.d2d); g, computed on cuda:0.compute after
// it, is placed over h's bytes by hand, and no event orders the copy before g.
const char* kUnorderedReuse = R"(
graph @unordered(%x: f32[256] @cpu) -> (y, g) attributes {arena_cpu = 2048, arena_cuda0 = 2048, arena_cuda1 = 1024} {
  %x.cuda0 = copy %x {offset = 1024, record = 0, stream = "cuda:0.h2d"} : f32[256] @cpu -> @cuda:0
  %h = relu %x.cuda0 {offset = 0, record = 1, stream = "cuda:0.compute", wait = [0]} : f32[256] @cuda:0
  %h.cuda1 = copy %h {offset = 0, record = 2, stream = "cuda:1.d2d", wait = [1]} : f32[256] @cuda:0 -> @cuda:1
  %g = exp %x.cuda0 {offset = 0, record = 3, stream = "cuda:0.compute"} : f32[256] @cuda:0
  %y = copy %h.cuda1 {offset = 0, stream = "cuda:1.d2h", wait = [2]} : f32[256] @cuda:1 -> @cpu
  %g.cpu = copy %g {offset = 1024, stream = "cuda:0.d2h", wait = [3]} : f32[256] @cuda:0 -> @cpu
  return %y, %g.cpu
}
)";

TEST(ExecutedPlanTest, AReuseNoEventOrdersIsRefusedAsAGxcBug) {
  auto graph = parseGraph(kUnorderedReuse, "unordered.gxir");
  SimConfig config;
  config.gpus = 2;
  try {
    SimExecutor executor(*graph, config);
    FAIL() << "an unordered reuse was accepted";
  } catch (const InternalError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("the schedule lets 'g' (stream cuda:0.compute) access bytes [0, 1024) of "
                        "cuda:0's arena while 'h.cuda1' (stream cuda:1.d2d) may still access them"),
              std::string::npos)
        << error.what();
  }
  // assign-streams, run again, adds the wait that makes it safe: g waits for the copy.
  PassManager manager;
  manager.add("assign-streams");
  manager.run(*graph, PassContext{});
  EXPECT_EQ(graph->find("g")->producer->attrs.getIntList("wait"), std::vector<int64_t>({2}));
  SimExecutor executor(*graph, config);
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  std::map<std::string, Tensor> outputs = executor.run(inputs);
  std::map<std::string, Tensor> expected = ReferenceExecutor(*graph).run(inputs);
  EXPECT_EQ(outputs.at("y").toFloats(), expected.at("y").toFloats());
  expectOutputsClose(outputs, expected, 1e-6);
}

}  // namespace
}  // namespace gxc
