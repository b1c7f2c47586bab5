// data-parallel: torch.chunk's cut of the batch, the IR the pass writes, and execution: every
// model gives the host reference's numbers when its batch is split over 2 and 4 virtual GPUs,
// also when the batch does not divide (130 rows over 4 devices: 33, 33, 33, 31) and when it
// is smaller than the number of devices.
#include "passes/data_parallel.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_compare.h"

#include "frontend/model_loader.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/data_parallel_rules.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

std::vector<Device> gpus(int count) {
  std::vector<Device> devices;
  for (int i = 0; i < count; ++i) devices.push_back(Device::cuda(i));
  return devices;
}

PassContext dataParallel(std::vector<Device> devices, std::vector<std::string>* notes = nullptr) {
  PassContext context;
  context.target = Target::of(std::move(devices));
  context.placement = "data-parallel";
  if (notes) context.note = [notes](const std::string& text) { notes->push_back(text); };
  return context;
}

void compile(Graph& graph, const PassContext& context) {
  PassManager(defaultPipeline()).run(graph, context);
}

std::vector<int64_t> chunkSizes(int64_t rows, int64_t parts) {
  std::vector<int64_t> sizes;
  for (const RowRange& range : chunkRows(rows, parts)) sizes.push_back(range.rows());
  return sizes;
}

TEST(DataParallelTest, ChunksAsTorchChunk) {
  EXPECT_EQ(chunkSizes(130, 4), (std::vector<int64_t>{33, 33, 33, 31}));
  EXPECT_EQ(chunkSizes(130, 2), (std::vector<int64_t>{65, 65}));
  EXPECT_EQ(chunkSizes(64, 4), (std::vector<int64_t>{16, 16, 16, 16}));
  // torch.chunk(torch.arange(5), 4) has 3 chunks; the fourth device gets none.
  EXPECT_EQ(chunkSizes(5, 4), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(chunkSizes(6, 4), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(chunkSizes(1, 4), (std::vector<int64_t>{1}));
  EXPECT_EQ(chunkRows(130, 4)[3].start, 99);
}

const char* const kMlp = R"(graph @mlp(%x: f32[130,13] @cpu) -> (fc2) attributes {seed = 0} {
  %fc1.weight = param {init = "uniform", low = -0.25, high = 0.25, name = "fc1.weight", seed = 0} : f32[16,13] @?
  %fc1.bias = param {init = "uniform", low = -0.25, high = 0.25, name = "fc1.bias", seed = 0} : f32[16] @?
  %fc2.weight = param {init = "uniform", low = -0.25, high = 0.25, name = "fc2.weight", seed = 0} : f32[1,16] @cuda:1
  %fc1 = linear %x, %fc1.weight, %fc1.bias {in_features = 13, out_features = 16} : f32[130,16] @cuda:1 loc("mlp.yaml":8:5)
  %act1 = relu %fc1 : f32[130,16] @? loc("mlp.yaml":9:5)
  %fc2 = linear %act1, %fc2.weight {bias = false, in_features = 16, out_features = 1} : f32[130,1] @? loc("mlp.yaml":10:5)
  return %fc2
}
)";

TEST(DataParallelTest, SplitsTheBatchReplicatesRowWiseOpsAndGathersOutputs) {
  auto graph = parseGraph(kMlp, "mlp.gxir");
  std::vector<std::string> notes;
  PassContext context = dataParallel(gpus(4), &notes);
  EXPECT_TRUE(DataParallelPass().run(*graph, context));
  ASSERT_EQ(notes.size(), 1u);  // the annotations on fc1 and fc2.weight are ignored
  EXPECT_EQ(graph->attrs().getInt("data_parallel", 0), 4);
  int64_t start = 0;
  for (int shard = 0; shard < 4; ++shard) {
    std::string suffix = ".shard" + std::to_string(shard);
    const Value* slice = graph->find("x" + suffix);
    ASSERT_NE(slice, nullptr) << suffix;
    EXPECT_EQ(slice->producer->kind, OpKind::Slice);
    EXPECT_EQ(slice->type.device, Device::cpu());
    EXPECT_EQ(slice->producer->attrs.getInt("start", -1), start);
    int64_t rows = shard < 3 ? 33 : 31;
    EXPECT_EQ(slice->producer->attrs.getInt("end", -1), start + rows);
    start += rows;
    for (const char* layer : {"fc1", "act1", "fc2"}) {
      const Value* value = graph->find(layer + suffix);
      ASSERT_NE(value, nullptr) << layer << suffix;
      EXPECT_EQ(value->type.device, Device::cuda(shard));
      EXPECT_EQ(value->type.shape[0], rows);
    }
  }
  // The output is gathered under its name on the first device; nothing else is whole.
  const Value* output = graph->outputs().at(0).value;
  EXPECT_EQ(output->name, "fc2");
  EXPECT_EQ(output->producer->kind, OpKind::Concat);
  EXPECT_EQ(output->type.device, Device::cuda(0));
  EXPECT_EQ(output->producer->operands.size(), 4u);
  EXPECT_EQ(graph->find("fc1"), nullptr);
  EXPECT_EQ(graph->find("act1"), nullptr);
  EXPECT_FALSE(graph->find("fc2.weight")->type.device.placed());  // assign-devices replicates
  // The scatter and the gather are explicit transfers, named as insert-copies names copies.
  const Value* scattered = graph->find("x.shard3.cuda3");
  ASSERT_NE(scattered, nullptr);
  EXPECT_EQ(scattered->producer->kind, OpKind::To);
  EXPECT_EQ(scattered->producer->operands.at(0)->name, "x.shard3");
  EXPECT_EQ(output->producer->operands.at(3)->name, "fc2.shard3.cuda0");
  EXPECT_EQ(output->producer->operands.at(3)->producer->kind, OpKind::To);

  std::string once = printGraph(*graph);
  EXPECT_FALSE(DataParallelPass().run(*graph, context));
  EXPECT_EQ(printGraph(*graph), once);
}

// torch.chunk of 5 rows over 4 devices makes 3 chunks: cuda:3 gets no work at all.
TEST(DataParallelTest, SmallBatchesLeaveTheLastDevicesIdle) {
  auto graph = parseGraph(R"(graph @g(%x: f32[5,4] @cpu) -> (y) {
  %y = relu %x : f32[5,4] @?
  return %y
}
)",
                          "g.gxir");
  EXPECT_TRUE(DataParallelPass().run(*graph, dataParallel(gpus(4))));
  EXPECT_EQ(graph->find("x.shard2")->type.shape, (Shape{1, 4}));
  EXPECT_EQ(graph->find("y.shard2")->type.device, Device::cuda(2));
  EXPECT_EQ(graph->find("x.shard3"), nullptr);
  EXPECT_EQ(graph->find("y.shard3"), nullptr);
  EXPECT_EQ(graph->outputs().at(0).value->producer->operands.size(), 3u);
}

TEST(DataParallelTest, OtherPlacementsAreLeftAlone) {
  auto graph = parseGraph(kMlp, "mlp.gxir");
  std::string before = printGraph(*graph);
  PassContext context = dataParallel(gpus(4));
  context.placement = "manual";
  EXPECT_FALSE(DataParallelPass().run(*graph, context));
  EXPECT_EQ(printGraph(*graph), before);
}

TEST(DataParallelTest, OneDeviceKeepsTheComputationAndDropsOnlyAnnotations) {
  const char* unannotated = R"(graph @g(%x: f32[130,4] @cpu) -> (y) {
  %y = relu %x : f32[130,4] @? loc("g.yaml":3:3)
  return %y
}
)";
  for (std::vector<Device> devices : {std::vector<Device>{Device::cpu()}, gpus(1)}) {
    auto graph = parseGraph(unannotated, "g.gxir");
    std::vector<std::string> notes;
    EXPECT_FALSE(DataParallelPass().run(*graph, dataParallel(devices, &notes)));
    EXPECT_EQ(printGraph(*graph), unannotated);
    EXPECT_TRUE(notes.empty());

    auto annotated = parseGraph(kMlp, "mlp.gxir");
    EXPECT_TRUE(DataParallelPass().run(*annotated, dataParallel(devices, &notes)));
    EXPECT_EQ(notes.size(), 1u);
    EXPECT_FALSE(annotated->attrs().has("data_parallel"));
    EXPECT_FALSE(annotated->find("fc1")->type.device.placed());
    EXPECT_EQ(annotated->ops().size(), 6u);
  }
}

TEST(DataParallelTest, RefusesGraphsThatAlreadyHaveCopies) {
  auto graph = parseGraph(R"(graph @g(%x: f32[8,4] @cpu) -> (y) {
  %x.cuda0 = copy %x : f32[8,4] @cpu -> @cuda:0 loc("g.yaml":3:3)
  %y = relu %x.cuda0 : f32[8,4] @cuda:0
  return %y
}
)",
                          "g.gxir");
  try {
    DataParallelPass().run(*graph, dataParallel(gpus(2)));
    FAIL() << "a graph with copies was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(formatError(error),
              "g.yaml:3:3: error: layer 'x.cuda0' is a copy: data-parallel runs before "
              "insert-copies");
  }
}

// --- Execution: the host reference's numbers on 2 and 4 virtual GPUs. ------------------------

// Small models whose batches do not divide by 4 (or are smaller than 4), exercising every
// rule: row-wise ops, exact batch reductions, and ops that need their operands whole.
const std::map<std::string, std::string>& testModels() {
  static const std::map<std::string, std::string> models = {
      {"mlp130", R"(gxc: 1
name: mlp130
inputs:
  x: {shape: [130, 13]}
layers:
  - {name: fc1, op: linear, inputs: [x], in_features: 13, out_features: 16}
  - {name: act1, op: relu, inputs: [fc1]}
  - {name: fc2, op: linear, inputs: [act1], in_features: 16, out_features: 32}
  - {name: act2, op: gelu, inputs: [fc2]}
  - {name: fc3, op: linear, inputs: [act2], in_features: 32, out_features: 1}
outputs: [fc3]
)"},
      {"losses130", R"(gxc: 1
name: losses130
seed: 3
inputs:
  features: {shape: [130, 10]}
  labels: {shape: [130], dtype: i64}
  target: {shape: [130, 5]}
params:
  class_weight: {shape: [5], init: {uniform: {low: 0.5, high: 2.0}}}
layers:
  - {name: head, op: linear, inputs: [features], in_features: 10, out_features: 5}
  - {name: ce, op: cross_entropy, inputs: [head, labels], weight: class_weight}
  - {name: ce_sum, op: cross_entropy, inputs: [head, labels], weight: class_weight,
     reduction: sum}
  - {name: ce_plain, op: cross_entropy, inputs: [head, labels]}
  - {name: ce_plain_sum, op: cross_entropy, inputs: [head, labels], reduction: sum}
  - {name: ce_rows, op: cross_entropy, inputs: [head, labels], weight: class_weight,
     reduction: none}
  - {name: mse, op: mse_loss, inputs: [head, target]}
  - {name: mse_sum, op: mse_loss, inputs: [head, target], reduction: sum}
  - {name: mse_rows, op: mse_loss, inputs: [head, target], reduction: none}
  - {name: total, op: add, inputs: [ce, mse]}
outputs: [ce, ce_sum, ce_plain, ce_plain_sum, ce_rows, mse, mse_sum, mse_rows, total]
)"},
      {"reductions130", R"(gxc: 1
name: reductions130
inputs:
  x: {shape: [130, 6, 3]}
layers:
  - {name: s0, op: sum, inputs: [x], axis: 0}
  - {name: m0, op: mean, inputs: [x], axis: 0, keepdim: true}
  - {name: x0, op: max, inputs: [x], axis: [0, 2]}
  - {name: all, op: mean, inputs: [x]}
  - {name: s01, op: sum, inputs: [x], axis: [1, 0], keepdim: true}
  - {name: rows, op: mean, inputs: [x], axis: -1}
  - {name: across, op: softmax, inputs: [rows], axis: 0}
  - {name: within, op: log_softmax, inputs: [rows], axis: 1}
  - {name: flat, op: reshape, inputs: [x], shape: [130, -1]}
  - {name: swapped, op: transpose, inputs: [x], perm: [0, 2, 1]}
  - {name: merged, op: reshape, inputs: [swapped], shape: [-1, 6]}
  - {name: mixed, op: add, inputs: [merged], scalar: 1.5}
  - {name: scaled, op: mul, inputs: [flat, flat]}
  - {name: mean_all, op: mean, inputs: [scaled], axis: [0, 1]}
outputs: [s0, m0, x0, all, s01, across, within, mixed, mean_all]
)"},
      {"reductions_more130", R"(gxc: 1
name: reductions_more130
inputs:
  x: {shape: [130, 6, 3]}
layers:
  - {name: min0, op: min, inputs: [x], axis: 0}
  - {name: prod0, op: prod, inputs: [x], axis: [0, -1], keepdim: true}
  - {name: lse_all, op: logsumexp, inputs: [x]}
  - {name: lse_rows, op: logsumexp, inputs: [x], axis: 2}
  - {name: arg0, op: argmax, inputs: [x], axis: 0}
  - {name: arg_rows, op: argmin, inputs: [x], axis: -1}
  - {name: arg_flat, op: argmax, inputs: [x]}
  - {name: var0, op: var, inputs: [x], axis: 0}
  - {name: std_rows, op: std, inputs: [x], axis: [1, 2], correction: 0}
  - {name: dropped, op: dropout, inputs: [x], p: 0.2}
  - {name: rms, op: rms_norm, inputs: [dropped], normalized_shape: [6, 3]}
  - {name: groups, op: group_norm, inputs: [rms], num_groups: 2, num_channels: 6}
  - {name: ln, op: layer_norm, inputs: [groups], normalized_shape: [6, 3]}
outputs: [min0, prod0, lse_all, lse_rows, arg0, arg_rows, arg_flat, var0, std_rows, ln]
)"},
      // batch_norm at inference is row-wise: each shard's samples, the same running statistics.
      {"batch_norm130", R"(gxc: 1
name: batch_norm130
inputs:
  x: {shape: [130, 6, 3]}
layers:
  - {name: bn, op: batch_norm, inputs: [x], num_features: 6}
  - {name: act, op: relu, inputs: [bn]}
  - {name: flat, op: reshape, inputs: [act], shape: [130, 18]}
  - {name: bn1d, op: batch_norm, inputs: [flat], num_features: 18, affine: false, eps: 0.001}
outputs: [bn1d]
)"},
      {"losses_more130", R"(gxc: 1
name: losses_more130
seed: 5
inputs:
  features: {shape: [130, 10]}
  labels: {shape: [130, 3], dtype: i64}
  y: {shape: [130, 4]}
params:
  class_weight: {shape: [4], init: {uniform: {low: 0.5, high: 2.0}}}
layers:
  - {name: head, op: linear, inputs: [features], in_features: 10, out_features: 12}
  - {name: spatial, op: reshape, inputs: [head], shape: [130, 4, 3]}
  - {name: logp, op: log_softmax, inputs: [spatial], axis: 1}
  - {name: nll, op: nll_loss, inputs: [logp, labels], weight: class_weight}
  - {name: nll_sum, op: nll_loss, inputs: [logp, labels], reduction: sum}
  - {name: ce, op: cross_entropy, inputs: [spatial, labels], label_smoothing: 0.1}
  - {name: ce_rows, op: cross_entropy, inputs: [spatial, labels], reduction: none, weight: class_weight}
  - {name: flat, op: reshape, inputs: [head], shape: [130, 3, 4]}
  - {name: pred, op: mean, inputs: [flat], axis: 1}
  - {name: bce, op: binary_cross_entropy_with_logits, inputs: [pred, y], pos_weight: class_weight}
  - {name: l1, op: l1_loss, inputs: [pred, y], reduction: sum}
  - {name: smooth, op: smooth_l1_loss, inputs: [pred, y], beta: 0.5}
  - {name: smooth_rows, op: smooth_l1_loss, inputs: [pred, y], reduction: none}
outputs: [nll, nll_sum, ce, ce_rows, bce, l1, smooth, smooth_rows]
)"},
      {"tiny_batch", R"(gxc: 1
name: tiny_batch
inputs:
  x: {shape: [3, 4]}
layers:
  - {name: h, op: linear, inputs: [x], in_features: 4, out_features: 5}
  - {name: m, op: mean, inputs: [h], axis: 0}
  - {name: n, op: layer_norm, inputs: [h]}
outputs: [m, n]
)"},
      {"lookup", R"(gxc: 1
name: lookup
inputs:
  ids: {shape: [130, 4], dtype: i64}
  x: {shape: [130, 4, 8]}
params:
  w: {shape: [16, 6], init: {normal: {std: 0.5}}}
layers:
  - {name: emb, op: embedding, inputs: [ids], num_embeddings: 11, embedding_dim: 8}
  - {name: both, op: concat, inputs: [emb, x], axis: 2}
  - {name: norm, op: layer_norm, inputs: [both]}
  - {name: proj, op: matmul, inputs: [norm, w]}
  - {name: scores, op: matmul, inputs: [proj, proj], transpose_b: true}
  - {name: attn, op: softmax, inputs: [scores]}
  - {name: moved, op: to, inputs: [attn], device: cuda:1}
  - {name: stacked, op: concat, inputs: [moved, moved], axis: 0}
  - {name: total, op: sum, inputs: [stacked]}
outputs: [moved, total]
)"},
  };
  return models;
}

struct Case {
  std::string model;  // a file of models/, or a name of testModels()
  int gpus;
};

// The case as ctest and GoogleTest name it: "mlp_2gpus_manual".
std::string nameOf(const Case& c) {
  std::string name = fs::path(c.model).stem().string() + "_" + std::to_string(c.gpus) + "gpus";
  std::replace_if(
      name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
  return name;
}

std::string caseName(const testing::TestParamInfo<Case>& info) { return nameOf(info.param); }

void PrintTo(const Case& c, std::ostream* os) { *os << nameOf(c); }

std::vector<Case> cases() {
  std::vector<std::string> models;
  for (const auto& entry : fs::directory_iterator(std::string(GXC_SOURCE_DIR) + "/models"))
    if (entry.path().extension() == ".yaml" && entry.path().filename() != "very_big_module.yaml")
      models.push_back(entry.path().filename().string());
  std::sort(models.begin(), models.end());
  for (const auto& [name, text] : testModels()) models.push_back(name);
  std::vector<Case> all;
  for (const std::string& model : models)
    for (int count : {2, 4}) all.push_back({model, count});
  return all;
}

std::unique_ptr<Graph> load(const std::string& model) {
  auto found = testModels().find(model);
  if (found != testModels().end())
    return loadModelFromString(found->second, model + ".yaml", GXC_SOURCE_DIR);
  return loadModel(std::string(GXC_SOURCE_DIR) + "/models/" + model);
}

class DataParallelExecutionTest : public testing::TestWithParam<Case> {};

TEST_P(DataParallelExecutionTest, OutputsMatchTheHostReference) {
  const Case& c = GetParam();
  auto reference = load(c.model);
  PassContext host;
  compile(*reference, host);
  std::map<std::string, Tensor> inputs;
  for (const Value* input : reference->inputs())
    inputs[input->name] = defaultInput(*reference, *input, reference->attrs().getInt("seed", 0));
  std::map<std::string, Tensor> expected = ReferenceExecutor(*reference).run(inputs);

  auto graph = load(c.model);
  PassContext context = dataParallel(gpus(c.gpus));
  // Every transfer is the pass's own `to` (scatter and gather): --strict lets them through.
  context.strict = true;
  compile(*graph, context);
  SimConfig config;
  config.gpus = c.gpus;
  config.memoryPerGpu = int64_t{1} << 30;
  SimRunReport report;
  std::map<std::string, Tensor> actual = SimExecutor(*graph, config).run(inputs, &report);
  expectOutputsCloseNormwise(actual, expected, 1e-5);  // OpenBLAS sums: output_compare.h
}

INSTANTIATE_TEST_SUITE_P(Models, DataParallelExecutionTest, testing::ValuesIn(cases()), caseName);

// With a batch that divides, every device does its share of the work.
TEST(DataParallelTest, EveryDeviceComputesItsShard) {
  auto graph = load("mlp.yaml");
  compile(*graph, dataParallel(gpus(4)));
  std::map<std::string, int> kernelsPerDevice;
  for (const Op* op : graph->ops())
    if (op->kind == OpKind::Linear) ++kernelsPerDevice[op->device().str()];
  EXPECT_EQ(kernelsPerDevice, (std::map<std::string, int>{
                                  {"cuda:0", 3}, {"cuda:1", 3}, {"cuda:2", 3}, {"cuda:3", 3}}));
  // One param replica per device: fc1.weight, fc1.weight.cuda1, ...
  for (const char* name :
       {"fc1.weight", "fc1.weight.cuda1", "fc1.weight.cuda2", "fc1.weight.cuda3"})
    EXPECT_NE(graph->find(name), nullptr) << name;
}

}  // namespace
}  // namespace gxc
