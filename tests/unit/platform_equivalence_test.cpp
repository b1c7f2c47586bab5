// Placement moves work, never changes answers: every runnable model of models/ gives the same
// outputs on 1, 2 and 4 virtual GPUs as the host reference interpreter (the cpu platform's
// OpenBLAS path is held to NumPy by model_numerics_test.cpp). Besides each model's own annotations
// (where they fit the run), the layers are spread over the GPUs in contiguous blocks, as a
// user annotating stages would, so every model crosses devices: its params are replicated,
// its activations copied, its streams synchronized by events. Auto placement and pipeline
// placement (stages and micro-batches, on 2 and 4 GPUs) are held to the same reference, and so
// is every model whose generated kernels run as GPU launches, every thread emulated.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_compare.h"
#include "runnable_models.h"

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string model;  // file name in models/
  int gpus;
  bool spread;  // override the annotations: layer blocks over the GPUs
  std::string placement = "manual";
  int microbatches = 0;  // pipeline's M; 0: the number of GPUs
  bool emulate = false;  // --emulate-gpu-blocks: every kernel runs its GPU launch, every thread
};

// The case as ctest and GoogleTest name it: "mlp_2gpus_manual".
std::string nameOf(const Case& c) {
  std::string name = fs::path(c.model).stem().string() + "_" + std::to_string(c.gpus) + "gpus" +
                     (c.spread ? "_spread" : "") + "_" + c.placement +
                     (c.microbatches ? "_m" + std::to_string(c.microbatches) : "") +
                     (c.emulate ? "_emulated" : "");
  std::replace_if(
      name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
  return name;
}

std::string caseName(const testing::TestParamInfo<Case>& info) { return nameOf(info.param); }

void PrintTo(const Case& c, std::ostream* os) { *os << nameOf(c); }

using testing_models::annotationsFit;
using testing_models::runnableModels;

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const std::string& model : runnableModels()) {
    auto graph = loadModel(std::string(GXC_SOURCE_DIR) + "/models/" + model);
    for (int gpus : {1, 2, 4}) {
      all.push_back({model, gpus, true});
      // The model's own annotations, which auto keeps as constraints, where they fit the run
      // (very_big_module_small's cuda:1 needs 2 GPUs).
      if (!annotationsFit(*graph, gpus)) continue;
      all.push_back({model, gpus, false});
      all.push_back({model, gpus, false, "auto"});
    }
    // Stages and micro-batches: 2 and 4 GPUs with 4 micro-batches, 2 GPUs with the default
    // (one per GPU) and with M = 3 (uneven micro-batches: 64 rows as 22, 22, 20).
    all.push_back({model, 2, false, "pipeline", 4});
    all.push_back({model, 4, false, "pipeline", 4});
    all.push_back({model, 2, false, "pipeline"});
    all.push_back({model, 2, false, "pipeline", 3});
    // Every generated kernel as a GPU launches it: its grid, its blocks' threads, barriers,
    // shuffles and shared memory (issue 14's emulation), on 2 GPUs.
    all.push_back({model, 2, true, "manual", 0, true});
  }
  return all;
}

// Layer i of n goes to cuda:(i * gpus / n); params are left for assign-devices to place.
void spreadLayers(Graph& graph, int gpus) {
  std::vector<Op*> layers;
  for (Op* op : graph.ops())
    if (op->kind != OpKind::Param) layers.push_back(op);
  for (size_t i = 0; i < layers.size(); ++i)
    layers[i]->result->type.device =
        Device::cuda(static_cast<int>(i * static_cast<size_t>(gpus) / layers.size()));
  for (Op* op : graph.ops())
    if (op->kind == OpKind::Param) op->result->type.device = {};
}

void compile(Graph& graph, std::vector<Device> devices, const std::string& placement = "manual",
             int microbatches = 0) {
  PassContext context;
  context.target = Target::of(std::move(devices));
  context.placement = placement;
  context.microbatches = microbatches;
  PassManager(defaultPipeline()).run(graph, context);
}

std::map<std::string, Tensor> inputsOf(const Graph& graph) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] = defaultInput(graph, *input, graph.attrs().getInt("seed", 0));
  return inputs;
}

class PlatformEquivalenceTest : public testing::TestWithParam<Case> {};

TEST_P(PlatformEquivalenceTest, OutputsMatchTheHostReference) {
  const Case& c = GetParam();
  std::string path = std::string(GXC_SOURCE_DIR) + "/models/" + c.model;
  auto reference = loadModel(path);
  compile(*reference, {Device::cpu()});
  std::map<std::string, Tensor> inputs = inputsOf(*reference);
  std::map<std::string, Tensor> expected = ReferenceExecutor(*reference).run(inputs);

  auto graph = loadModel(path);
  if (c.spread) spreadLayers(*graph, c.gpus);
  ASSERT_TRUE(annotationsFit(*graph, c.gpus)) << "cases() makes only cases that fit";
  std::vector<Device> devices;
  for (int i = 0; i < c.gpus; ++i) devices.push_back(Device::cuda(i));
  compile(*graph, devices, c.placement, c.microbatches);
  SimConfig config;
  config.gpus = c.gpus;
  config.memoryPerGpu = int64_t{1} << 30;
  config.launch.emulateBlocks = c.emulate;
  SimRunReport report;
  std::map<std::string, Tensor> actual = SimExecutor(*graph, config).run(inputs, &report);
  int64_t copies = 0;
  for (const SimDeviceReport& device : report.devices) copies += device.copiesIn;
  // Inputs arrive on the host; auto may keep small models there entirely.
  if (c.placement == "manual" || c.placement == "pipeline") {
    EXPECT_GT(copies, 0) << "something must cross devices";
  }
  // sim runs the cpu platform's generated kernels and OpenBLAS GEMMs: compared normwise
  // (output_compare.h) with the reference's double sums.
  expectOutputsCloseNormwise(actual, expected, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Models, PlatformEquivalenceTest, testing::ValuesIn(cases()), caseName);

}  // namespace
}  // namespace gxc
