// plan-memory: on random graphs, activations live at one step on one device never overlap in
// the arena, views lie on the bytes they see, and the arena lies between the most bytes live
// at once and the sum of all activations; params and inputs are resident, outside it; reuse,
// refusal and idempotence on small graphs. Lifetimes are recomputed here from the definition,
// not taken from the pass.
#include "passes/plan_memory.h"

#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"

namespace gxc {
namespace {

int64_t rounded(int64_t bytes) { return (bytes + 511) / 512 * 512; }

// The planner reads only types, devices and the op order, so the random ops need not
// type-check: each is a `relu` or an `add` of earlier values with a shape of its own.
std::unique_ptr<Graph> randomGraph(std::mt19937& random) {
  auto graph = std::make_unique<Graph>("random");
  const Device devices[] = {Device::cpu(), Device::cuda(0), Device::cuda(1)};
  auto pick = [&](int count) { return std::uniform_int_distribution<int>(0, count - 1)(random); };
  auto randomType = [&]() {
    // Mostly small tensors, some zero-sized, some exactly a multiple of 512 bytes.
    int64_t elements = pick(10) == 0 ? 0 : pick(4) == 0 ? 128 * (1 + pick(8)) : 1 + pick(5000);
    return TensorType::of(DType::F32, {elements}, devices[pick(3)]);
  };
  std::vector<Value*> values;
  int inputs = 1 + pick(3);
  for (int i = 0; i < inputs; ++i)
    values.push_back(graph->addInput("in" + std::to_string(i), randomType()));
  int ops = 1 + pick(60);
  for (int i = 0; i < ops; ++i) {
    std::string name = "v" + std::to_string(i);
    if (pick(5) == 0) {
      values.push_back(graph->appendOp(OpKind::Param, {}, name, randomType())->result);
      continue;
    }
    if (pick(6) == 0) {  // a view: the same bytes, on its operand's device
      Value* seen = values[values.size() - 1 - pick(std::min<int>(values.size(), 4))];
      TensorType type = seen->type;
      type.shape.insert(type.shape.begin(), 1);
      values.push_back(graph->appendOp(OpKind::Reshape, {seen}, name, type)->result);
      continue;
    }
    // Recent values mostly, so that lifetimes are short and reuse is possible.
    auto operand = [&]() {
      int window = std::min<int>(static_cast<int>(values.size()), 1 + pick(8));
      return values[values.size() - 1 - pick(window)];
    };
    std::vector<Value*> operands = {operand()};
    if (pick(2) == 0) operands.push_back(operand());
    OpKind kind = operands.size() == 1 ? OpKind::Relu : OpKind::Add;
    values.push_back(graph->appendOp(kind, operands, name, randomType())->result);
  }
  int outputs = 1 + pick(3);
  for (int i = 0; i < outputs; ++i)
    graph->addOutput("out" + std::to_string(i),
                     values[values.size() - 1 - pick(3) % values.size()]);
  return graph;
}

struct Lifetime {
  int64_t first = 0, last = 0;
};

// The value whose buffer holds a value's bytes: itself, or for a view what it sees.
const Value* baseOf(const Value* value) {
  while (value->producer && value->producer->kind == OpKind::Reshape)
    value = value->producer->operands[0];
  return value;
}

// By the definition: from the defining op to the last use of the value or of a view of it;
// outputs to the end; params and inputs over the whole run. By base value.
std::map<const Value*, Lifetime> lifetimes(const Graph& graph) {
  const auto end = static_cast<int64_t>(graph.ops().size());
  std::map<const Value*, Lifetime> result;
  for (const Value* input : graph.inputs()) result[input] = {0, end};
  for (size_t step = 0; step < graph.ops().size(); ++step) {
    const Op* op = graph.ops()[step];
    auto at = static_cast<int64_t>(step);
    if (op->kind != OpKind::Reshape)
      result[op->result] = op->kind == OpKind::Param ? Lifetime{0, end} : Lifetime{at, at};
    for (const Value* operand : op->operands)
      result[baseOf(operand)].last = std::max(result[baseOf(operand)].last, at);
  }
  for (const GraphOutput& output : graph.outputs()) result[baseOf(output.value)].last = end;
  return result;
}

bool isResident(const Value* value) {
  return !value->producer || value->producer->kind == OpKind::Param;
}

TEST(PlanMemoryTest, RandomGraphsNeverOverlapLiveBuffersAndPeakIsBounded) {
  std::mt19937 random(20240611);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    std::unique_ptr<Graph> graph = randomGraph(random);
    PlanMemoryPass().run(*graph, PassContext{});
    std::map<const Value*, Lifetime> live = lifetimes(*graph);
    for (const DevicePlan& plan : planMemory(*graph)) {
      SCOPED_TRACE(plan.device.str());
      std::vector<PlannedBuffer> arena;
      int64_t sum = 0, top = 0, resident = 0;
      for (const PlannedBuffer& buffer : plan.buffers) {
        EXPECT_EQ(buffer.value->type.device, plan.device);
        EXPECT_EQ(buffer.rounded, rounded(buffer.bytes));
        EXPECT_EQ(buffer.resident, isResident(buffer.value)) << buffer.value->name;
        EXPECT_EQ(buffer.firstStep, live[buffer.value].first) << buffer.value->name;
        EXPECT_EQ(buffer.lastStep, live[buffer.value].last) << buffer.value->name;
        if (buffer.resident) {
          resident += buffer.rounded;
          if (buffer.value->producer) {
            EXPECT_FALSE(buffer.value->producer->attrs.has("offset"));
          }
          continue;
        }
        EXPECT_EQ(buffer.offset % 512, 0);
        EXPECT_EQ(buffer.value->producer->attrs.getInt("offset", -1), buffer.offset);
        sum += buffer.rounded;
        top = std::max(top, buffer.offset + buffer.rounded);
        arena.push_back(buffer);
      }
      for (size_t i = 0; i < arena.size(); ++i)
        for (size_t j = i + 1; j < arena.size(); ++j) {
          const Lifetime& a = live[arena[i].value];
          const Lifetime& b = live[arena[j].value];
          bool together = a.first <= b.last && b.first <= a.last;
          bool shareBytes = arena[i].offset < arena[j].offset + arena[j].rounded &&
                            arena[j].offset < arena[i].offset + arena[i].rounded;
          EXPECT_FALSE(together && shareBytes)
              << arena[i].value->name << " and " << arena[j].value->name;
        }
      // A view is on the bytes it sees: the same offset (a reshape), or none if resident.
      for (const PlannedView& view : plan.views) {
        EXPECT_EQ(view.base, baseOf(view.value));
        const Op& op = *view.value->producer;
        if (isResident(view.base)) {
          EXPECT_FALSE(op.attrs.has("offset")) << view.value->name;
        } else {
          EXPECT_EQ(op.attrs.getInt("offset", -1), view.base->producer->attrs.getInt("offset", -2))
              << view.value->name;
        }
      }
      int64_t mostLive = 0;
      for (int64_t step = 0; step <= static_cast<int64_t>(graph->ops().size()); ++step) {
        int64_t bytes = 0;
        for (const PlannedBuffer& buffer : arena)
          if (live[buffer.value].first <= step && step <= live[buffer.value].last)
            bytes += buffer.rounded;
        mostLive = std::max(mostLive, bytes);
      }
      EXPECT_EQ(plan.arenaBytes, top);
      EXPECT_GE(plan.arenaBytes, mostLive);
      EXPECT_LE(plan.arenaBytes, sum);
      EXPECT_EQ(plan.residentBytes, resident);
      EXPECT_EQ(plan.peakBytes, resident + top);
      EXPECT_EQ(graph->attrs().getInt(arenaAttrName(plan.device), -1), plan.arenaBytes);
      EXPECT_EQ(graph->attrs().getInt(peakAttrName(plan.device), -1), plan.peakBytes);
    }
    std::string once = printGraph(*graph);
    EXPECT_FALSE(PlanMemoryPass().run(*graph, PassContext{}));  // idempotent
    EXPECT_EQ(printGraph(*graph), once);
  }
}

const char* kChain = R"(graph @chain(%x: f32[256] @cuda:0) -> (d) {
  %w = param {init = "zeros", name = "w", seed = 0} : f32[128] @cuda:0
  %a = relu %x : f32[256] @cuda:0
  %b = relu %a : f32[256] @cuda:0
  %c = relu %b : f32[256] @cuda:0
  %d = add %c, %w : f32[128] @cuda:0 loc("m.yaml":7:3)
  return %d
}
)";

TEST(PlanMemoryTest, ValuesThatAreNeverLiveTogetherShareMemory) {
  auto graph = parseGraph(kChain, "chain.gxir");
  EXPECT_TRUE(PlanMemoryPass().run(*graph, PassContext{}));
  auto offset = [&](const char* name) {
    return graph->find(name)->producer->attrs.getInt("offset", -1);
  };
  // x (1 KiB) and w (512 B) are resident, outside the arena; a and c take turns with b.
  EXPECT_EQ(offset("w"), -1);
  EXPECT_EQ(offset("a"), offset("c"));
  EXPECT_NE(offset("a"), offset("b"));
  EXPECT_EQ(graph->attrs().getInt("arena_cuda0", -1), 1024 + 1024);
  EXPECT_EQ(graph->attrs().getInt("peak_cuda0", -1), 1024 + 512 + 1024 + 1024);
}

TEST(PlanMemoryTest, APlanThatDoesNotFitIsRefusedAndTheGraphLeftAlone) {
  auto graph = parseGraph(kChain, "chain.gxir");
  std::string before = printGraph(*graph);
  PassContext context;
  context.target = Target::withGpuMemory({Device::cuda(0)}, 3 * 1024);
  try {
    PlanMemoryPass().run(*graph, context);
    FAIL() << "a 3.5 KiB plan fit in 3 KiB";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Model);
    EXPECT_EQ(formatError(error),
              "gxc: error: the plan does not fit: cuda:0 needs 3.5 KiB, has 3.0 KiB (largest: "
              "x 1.0 KiB, a 1.0 KiB, b 1.0 KiB)");
  }
  EXPECT_EQ(printGraph(*graph), before);
  context.target = Target::withGpuMemory({Device::cuda(0)}, 3 * 1024 + 512);  // the peak: fits
  EXPECT_TRUE(PlanMemoryPass().run(*graph, context));
  context.target = Target::withGpuMemory({Device::cuda(0)}, 0);  // unlimited
  EXPECT_FALSE(PlanMemoryPass().run(*graph, context));
}

TEST(PlanMemoryTest, ALongChainNeedsThreeBuffers) {
  // 1,000 layers: reuse keeps the peak at three buffers, the input and two that alternate.
  // (How fast chains of 100,000 plan is bench/compile_time_bench.py's to measure.)
  Graph graph("long");
  Value* value = graph.addInput("x", TensorType::of(DType::F32, {1024}, Device::cuda(0)));
  std::vector<const Op*> chain;
  for (int i = 0; i < 1000; ++i) {
    chain.push_back(graph.appendOp(OpKind::Relu, {value}, "r" + std::to_string(i), value->type));
    value = chain.back()->result;
  }
  graph.addOutput("y", value);
  PlanMemoryPass().run(graph, PassContext{});
  EXPECT_EQ(graph.attrs().getInt("peak_cuda0", -1), 3 * 4096);
  std::set<int64_t> offsets;
  for (size_t i = 0; i < chain.size(); ++i) {
    offsets.insert(chain[i]->attrs.getInt("offset", -1));
    if (i > 0) {
      EXPECT_NE(chain[i]->attrs.getInt("offset", -1), chain[i - 1]->attrs.getInt("offset", -1))
          << "layer " << i << " writes over its own operand";
    }
  }
  EXPECT_EQ(offsets.size(), 2u);
  EXPECT_EQ(offsets.count(-1), 0u);
}

}  // namespace
}  // namespace gxc
