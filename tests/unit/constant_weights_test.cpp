// The host executor's packed constant weights (runtime/host/constant_weights.h): a copy is made
// once per weights and layout and forgotten on demand; new param values reach the next run's
// GEMMs and convolutions; a training graph's params, which its steps write, are never packed,
// so every step reads the values the step before wrote. Outputs against the reference
// interpreter, run after run.
#include "runtime/host/constant_weights.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/host/onednn_matmul.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "sim_test_graphs.h"

namespace gxc {
namespace {

TEST(ConstantWeightsTest, PacksOncePerWeightsAndLayoutUntilForgotten) {
  ConstantWeights constant;
  const float weights[4] = {1, 2, 3, 4};
  int packs = 0;
  const auto pack = [&](void* into) {
    ++packs;
    static_cast<float*>(into)[0] = 42.0f;
  };
  const int layoutA = 0, layoutB = 0;
  const void* first = constant.packed(weights, &layoutA, 16, pack);
  EXPECT_EQ(constant.packed(weights, &layoutA, 16, pack), first);
  EXPECT_EQ(packs, 1);
  EXPECT_EQ(static_cast<const float*>(first)[0], 42.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  constant.packed(weights, &layoutB, 16, pack);  // another layout of the same weights
  EXPECT_EQ(packs, 2);
  EXPECT_EQ(constant.packedBytes(), 128);  // each rounded up to 64 bytes
  constant.forgetPacked();
  EXPECT_EQ(constant.packedBytes(), 0);
  constant.packed(weights, &layoutA, 16, pack);
  EXPECT_EQ(packs, 3);
}

TEST(ConstantWeightsTest, AFailedPackLeavesNothingBehind) {
  ConstantWeights constant;
  const float weights[1] = {1};
  const int layout = 0;
  EXPECT_THROW(
      constant.packed(weights, &layout, 4, [](void*) { throw std::runtime_error("no memory"); }),
      std::runtime_error);
  EXPECT_EQ(constant.packedBytes(), 0);
  int packs = 0;
  constant.packed(weights, &layout, 4, [&](void*) { ++packs; });
  EXPECT_EQ(packs, 1);
}

std::unique_ptr<Graph> compiled(const std::string& body, const std::vector<std::string>& passes) {
  auto graph =
      loadModelFromString("gxc: 1\nname: packed\nseed: 5\n" + body, "packed.yaml", GXC_SOURCE_DIR);
  PassContext context;
  context.target = Target::of({Device::cpu()});
  PassManager(passes).run(*graph, context);
  return graph;
}

void expectClose(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  for (int64_t i = 0; i < expected.numel(); ++i)
    ASSERT_NEAR(actual.loadDouble(i), expected.loadDouble(i),
                1e-4 * std::max(1.0, std::abs(expected.loadDouble(i))))
        << what << " element " << i;
}

// A convolution, a linear layer and a matmul by a declared param (as an ONNX MatMul's
// initializer), all f32, large enough that oneDNN packs their weights.
const char* kConvLinear =
    "inputs:\n  x: {shape: [2, 8, 10, 10]}\n"
    "params:\n  w: {shape: [128, 96], init: {normal: {std: 0.2}}}\n"
    "layers:\n"
    "  - {name: conv, op: conv2d, inputs: [x], in_channels: 8, out_channels: 16, kernel_size: 3}\n"
    "  - {name: flat, op: reshape, inputs: [conv], shape: [2, 1024]}\n"
    "  - {name: fc1, op: linear, inputs: [flat], in_features: 1024, out_features: 128}\n"
    "  - {name: fc, op: matmul, inputs: [fc1, w]}\n";

TEST(HostConstantWeightsTest, NewParamValuesReachTheNextRunsGemmsAndConvolutions) {
  auto graph = compiled(std::string(kConvLinear) + "outputs: [fc]\n", defaultPipeline());
  std::map<std::string, Tensor> inputs = simtest::defaultInputs(*graph);
  HostExecutor host(*graph);
  ReferenceExecutor reference(*graph);
  HostRunStats stats;
  expectClose(host.run(inputs, &stats).at("fc"), reference.run(inputs).at("fc"), "first run");
  int64_t paramBytes = 0;
  for (const auto& [name, value] : host.paramValues())
    paramBytes += static_cast<int64_t>(value.nbytes());
  EXPECT_GT(stats.residentBytes, paramBytes) << "the weights were not packed";
  expectClose(host.run(inputs).at("fc"), reference.run(inputs).at("fc"), "second run");

  // New weights: the packed copies of the old ones must not be read again.
  std::map<std::string, Tensor> changed;
  for (const auto& [name, value] : host.paramValues()) {
    Tensor moved = value;
    for (int64_t i = 0; i < moved.numel(); ++i)
      moved.storeDouble(i, 0.5 - moved.loadDouble(i) * 1.5);
    changed.emplace(name, std::move(moved));
  }
  host.setParamValues(changed);
  reference.setParamValues(changed);
  expectClose(host.run(inputs).at("fc"), reference.run(inputs).at("fc"), "after new params");
}

TEST(HostConstantWeightsTest, AMatmulsConstantBIsPackedForEveryBatchEntry) {
  if (!onednnPacksConstantB(false, false, 64, 256, 128))
    GTEST_SKIP() << "oneDNN takes this GEMM's B as it is on this CPU (no AVX-512): nothing to pack";
  auto graph = compiled(
      "inputs:\n  x: {shape: [3, 64, 128]}\n"
      "params:\n  w: {shape: [128, 256], init: {normal: {std: 0.2}}}\n"
      "layers:\n  - {name: y, op: matmul, inputs: [x, w]}\noutputs: [y]\n",
      defaultPipeline());
  std::map<std::string, Tensor> inputs = simtest::defaultInputs(*graph);
  HostExecutor host(*graph);
  ReferenceExecutor reference(*graph);
  HostRunStats stats;
  for (int run = 0; run < 2; ++run)
    expectClose(host.run(inputs, &stats).at("y"), reference.run(inputs).at("y"),
                "run " + std::to_string(run));
  const int64_t paramBytes = 128 * 256 * 4;
  EXPECT_GT(stats.residentBytes, paramBytes) << "w was not packed";
  EXPECT_LT(stats.residentBytes, 3 * paramBytes) << "w was packed more than once";
}

TEST(HostConstantWeightsTest, ATrainingGraphsStepsReadTheParamsTheStepBeforeWrote) {
  auto graph = compiled(std::string(kConvLinear) +
                            "  - {name: loss, op: mean, inputs: [fc]}\n"
                            "outputs: [loss]\n"
                            "train: {loss: loss, optimizer: {sgd: {lr: 0.5}}}\n",
                        trainingPipeline());
  std::map<std::string, Tensor> inputs = simtest::defaultInputs(*graph);
  HostExecutor host(*graph);
  ReferenceExecutor reference(*graph);
  double first = 0;
  for (int step = 0; step < 3; ++step) {
    HostRunStats stats;
    std::map<std::string, Tensor> out = host.run(inputs, &stats);
    expectClose(out.at("loss"), reference.run(inputs).at("loss"), "step " + std::to_string(step));
    if (step == 0) first = out.at("loss").loadDouble(0);
    int64_t paramBytes = 0;
    for (const auto& [name, value] : host.paramValues())
      paramBytes += static_cast<int64_t>(value.nbytes());
    EXPECT_EQ(stats.residentBytes, paramBytes) << "a trained param was packed";
  }
  EXPECT_LT(reference.run(inputs).at("loss").loadDouble(0), first);  // it trained
}

}  // namespace
}  // namespace gxc
