// pipeline-stages: the balanced cut (against every contiguous cut, by brute force), the
// constraints and their errors, idempotence, and execution: the stages really overlap on
// the sim's clock (stage 1 on micro-batch j while stage 0 is on j+1) and give the host's
// numbers.
#include "passes/pipeline_stages.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_compare.h"

#include "frontend/model_loader.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "passes/pipeline_stage_cut.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

std::vector<Device> gpus(int count) {
  std::vector<Device> devices;
  for (int i = 0; i < count; ++i) devices.push_back(Device::cuda(i));
  return devices;
}

PassContext pipeline(int gpuCount, int microbatches, std::vector<std::string>* notes = nullptr) {
  PassContext context;
  context.target = Target::of(gpus(gpuCount));
  context.placement = "pipeline";
  context.microbatches = microbatches;
  if (notes) context.note = [notes](const std::string& text) { notes->push_back(text); };
  return context;
}

std::vector<StageLayer> layersOfSeconds(const std::vector<double>& seconds) {
  std::vector<StageLayer> layers;
  for (double s : seconds) layers.push_back({s, {}, 0, -1});
  return layers;
}

// The best bottleneck over every cut of the layers into at most `stages` contiguous runs.
double bruteForceBottleneck(const std::vector<double>& seconds, size_t stages) {
  double best = std::numeric_limits<double>::infinity();
  std::function<void(size_t, size_t, double)> cutFrom = [&](size_t first, size_t left,
                                                            double worst) {
    if (first == seconds.size()) {
      best = std::min(best, worst);
      return;
    }
    if (left == 0) return;
    double sum = 0;
    for (size_t end = first; end < seconds.size(); ++end) {
      sum += seconds[end];
      cutFrom(end + 1, left - 1, std::max(worst, sum));
    }
  };
  cutFrom(0, stages, 0);
  return best;
}

TEST(PipelineStagesTest, CutIsTheBestContiguousCut) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> cost(1e-6, 1e-3);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> seconds(1 + random() % 9);
    for (double& s : seconds) s = cost(random);
    size_t stages = 1 + random() % 4;
    std::optional<StageCut> cut =
        cutStages(layersOfSeconds(seconds), std::vector<int64_t>(stages, 0));
    ASSERT_TRUE(cut.has_value());
    EXPECT_TRUE(std::is_sorted(cut->stageOf.begin(), cut->stageOf.end()));
    EXPECT_LT(cut->stageOf.back(), stages);
    EXPECT_NEAR(cut->bottleneckSeconds, bruteForceBottleneck(seconds, stages), 1e-12)
        << "trial " << trial;
  }
}

TEST(PipelineStagesTest, CutHonoursRequiredStagesAndMemory) {
  std::vector<StageLayer> layers = layersOfSeconds({3, 1, 1, 1});
  EXPECT_EQ(cutStages(layers, {0, 0})->stageOf, (std::vector<size_t>{0, 1, 1, 1}));
  layers[1].requiredStage = 0;  // an annotation pulls the second layer into stage 0
  EXPECT_EQ(cutStages(layers, {0, 0})->stageOf, (std::vector<size_t>{0, 0, 1, 1}));

  // Two params of 1 KiB: a device of 1.5 KiB holds one of them, so the first two layers
  // cannot share a stage, although time alone (1 + 0.1 | 1) would put them in one.
  auto graph = std::make_unique<Graph>("params");
  TensorType kib = TensorType::of(DType::F32, {256});
  Value* a = graph->appendOp(OpKind::Param, {}, "a", kib)->result;
  Value* b = graph->appendOp(OpKind::Param, {}, "b", kib)->result;
  std::vector<StageLayer> heavy = {{1, {a}, 0, -1}, {0.1, {b}, 0, -1}, {1, {}, 0, -1}};
  EXPECT_EQ(cutStages(heavy, {0, 0})->stageOf, (std::vector<size_t>{0, 0, 1}));
  StageCut split = *cutStages(heavy, {1536, 1536});
  EXPECT_EQ(split.stageOf, (std::vector<size_t>{0, 1, 1}));
  EXPECT_TRUE(split.fitsMemory);
  StageCut tooSmall = *cutStages(heavy, {512, 512});
  EXPECT_FALSE(tooSmall.fitsMemory);
}

const char* kChain =
    "gxc: 1\n"
    "name: chain\n"
    "inputs:\n"
    "  x: {shape: [10, 16]}\n"
    "layers:\n"
    "  - {name: fc1, op: linear, inputs: [x], in_features: 16, out_features: 32}\n"
    "  - {name: act1, op: relu, inputs: [fc1]}\n"
    "  - {name: fc2, op: linear, inputs: [act1], in_features: 32, out_features: 32}\n"
    "  - {name: act2, op: relu, inputs: [fc2]}\n"
    "  - {name: mean, op: mean, inputs: [act2], axis: 0}\n"
    "outputs: [act2, mean]\n";

TEST(PipelineStagesTest, SecondRunChangesNothing) {
  auto graph = loadModelFromString(kChain, "chain.yaml", ".");
  PassContext context = pipeline(2, 4);
  PipelineStagesPass pass;
  EXPECT_TRUE(pass.run(*graph, context));
  std::string once = printGraph(*graph);
  EXPECT_FALSE(pass.run(*graph, context));
  EXPECT_EQ(printGraph(*graph), once);
  EXPECT_NE(once.find("pipeline_stages = 2"), std::string::npos) << once;
  EXPECT_NE(once.find("microbatches = 4"), std::string::npos) << once;
}

TEST(PipelineStagesTest, OtherPlacementsAreLeftAlone) {
  auto graph = loadModelFromString(kChain, "chain.yaml", ".");
  std::string before = printGraph(*graph);
  PassContext context = pipeline(2, 4);
  context.placement = "data-parallel";
  EXPECT_FALSE(PipelineStagesPass().run(*graph, context));
  EXPECT_EQ(printGraph(*graph), before);
}

TEST(PipelineStagesTest, RoundedMicrobatchesAreSaidAndTooManyRefused) {
  std::vector<std::string> notes;
  auto graph = loadModelFromString(kChain, "chain.yaml", ".");
  PipelineStagesPass().run(*graph, pipeline(2, 4, &notes));  // 10 rows: 3, 3, 3, 1
  EXPECT_TRUE(notes.empty());
  graph = loadModelFromString(kChain, "chain.yaml", ".");
  PipelineStagesPass().run(*graph, pipeline(2, 8, &notes));  // 10 rows: 2 x 5
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "input 'x': torch.chunk cuts its 10 rows into 5 micro-batches of at most 2 rows, "
            "not 8");
  graph = loadModelFromString(kChain, "chain.yaml", ".");
  try {
    PipelineStagesPass().run(*graph, pipeline(2, 11));
    FAIL() << "11 micro-batches of 10 rows were accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Usage);
    EXPECT_EQ(error.message(),
              "--microbatches 11: input 'x' has 10 rows (its dim 0, the batch), fewer than the "
              "micro-batches asked for");
  }
}

TEST(PipelineStagesTest, AnnotationsOutOfStageOrderAreErrors) {
  std::string model = std::string(kChain);
  model.replace(model.find("out_features: 32}"), 17, "out_features: 32, device: cuda:1}");
  model.replace(model.find("inputs: [fc2]}"), 14, "inputs: [fc2], device: cuda:0}");
  auto graph = loadModelFromString(model, "chain.yaml", ".");
  try {
    PipelineStagesPass().run(*graph, pipeline(2, 2));
    FAIL() << "annotations against the program order were accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Model);
    EXPECT_EQ(error.message(),
              "layer 'act2' is placed on cuda:0 but comes after layer 'fc1' on cuda:1: pipeline "
              "stages follow the program order over the devices");
  }
}

// Two GEMMs of equal size: stage 0 computes h, stage 1 y. On the sim's clock, stage 1's GEMM
// of micro-batch 0 runs while stage 0's GEMM of micro-batch 1 does, and the outputs are the
// host's. (At this size launches and copy latencies outweigh the GEMMs, so the run is not
// faster than on one GPU: bench/pipeline_bench measures the speedup at a size that is.)
TEST(PipelineStagesTest, StagesOverlapOnTheSimClockAndGiveTheHostsNumbers) {
  const char* model =
      "gxc: 1\n"
      "name: two_gemms\n"
      "inputs:\n"
      "  x: {shape: [64, 128]}\n"
      "params:\n"
      "  W1: {shape: [128, 512], init: {normal: {std: 0.05}}}\n"
      "  W2: {shape: [512, 128], init: {normal: {std: 0.05}}}\n"
      "layers:\n"
      "  - {name: h, op: matmul, inputs: [x, W1]}\n"
      "  - {name: y, op: matmul, inputs: [h, W2]}\n"
      "outputs: [y]\n";
  auto reference = loadModelFromString(model, "two_gemms.yaml", ".");
  PassContext host;
  PassManager(defaultPipeline()).run(*reference, host);
  std::map<std::string, Tensor> inputs;
  for (const Value* input : reference->inputs())
    inputs[input->name] = defaultInput(*reference, *input, 0);
  std::map<std::string, Tensor> expected = ReferenceExecutor(*reference).run(inputs);

  auto graph = loadModelFromString(model, "two_gemms.yaml", ".");
  PassManager(defaultPipeline()).run(*graph, pipeline(2, 4));
  SimConfig config;
  config.gpus = 2;
  SimRunReport report;
  std::map<std::string, Tensor> actual = SimExecutor(*graph, config).run(inputs, &report);
  expectOutputsClose(actual, expected, 1e-5);

  auto span = [&](const std::string& name) -> const TraceSpan& {
    for (const TraceSpan& s : report.trace.spans())
      if (s.name.rfind("%" + name + " =", 0) == 0) return s;
    throw std::runtime_error("no span for " + name);
  };
  const TraceSpan& stage1 = span("y.mb0");
  const TraceSpan& stage0 = span("h.mb1");
  EXPECT_EQ(stage0.lane, "cuda:0.compute");
  EXPECT_EQ(stage1.lane, "cuda:1.compute");
  EXPECT_LT(stage1.startUs, stage0.startUs + stage0.durationUs);
  EXPECT_LT(stage0.startUs, stage1.startUs + stage1.durationUs);
}

}  // namespace
}  // namespace gxc
