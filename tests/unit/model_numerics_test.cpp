// Whole models against NumPy and PyTorch: each model of models/ that runs here, and f16 and bf16
// variants of mlp and transformer_block (tests/fixtures/models/<model>/model.yaml), is loaded
// with the weights of tests/fixtures/models/<model>/, compiled by the default pipeline and run
// on the host by the reference interpreter, on the cpu platform (OpenBLAS GEMMs and generated
// kernels) and on two virtual GPUs (sim) under every placement; every run's outputs are
// compared with the ones make_model_fixtures.py computed, in NumPy (f32) or in PyTorch (f16 and
// bf16), or, for the networks (gpt_decoder, ...), make_network_fixtures.py's torch.nn.Modules:
// implementations that share no code with gxc.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"
#include "tensor/npy.h"
#include "tensor/safetensors.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

// The tolerances of docs/architecture.md (Generated kernels), per element, as numpy.allclose
// states them: |gxc - fixture| <= atol + rtol * |fixture|.
// f32: rtol 1e-5, atol two ulp of 1 (fixtures::kF32Tolerance). Every output is off from NumPy's
// float64 value by float32 rounding alone, and the fixtures keep activations of order 1 (see
// make_model_fixtures.py): the relative term covers outputs of order 1, the absolute term the
// roundoff of order-1 terms whose sums cancel to an output near 0. The models whose outputs are
// long sums (kLongSums) leave more of it.
// f16 and bf16: rtol 1e-2, no absolute term. The reference rounds every op's result to the dtype
// as PyTorch does, and matches it exactly; the fused kernels of cpu and sim keep their members'
// results in f32, which moves transformer_block's output by up to 9.5e-4 (f16) and 6.8e-3
// (bf16), and every output within 1e-2 of its own magnitude.
// f64: fixtures::kF64Tolerance, as the op fixtures: double's roundoff for f32's.
constexpr fixtures::WiderAbsoluteTerm kLongSums[] = {
    // 1000-term then 200-term dot products (OpenBLAS in cpu and sim) of order-1 activations,
    // which need up to 8.4e-7 beyond the relative term (cpu against the reference): 16 ulp of 1.
    {"very_big_module_small", 0x1p-19},
    // Four attention and MLP blocks of width 32 adding into a residual stream, then the tied
    // head: logits need up to 1.1e-6 beyond the relative term (cpu against the reference); 16
    // ulp of 1.
    {"gpt_decoder", 0x1p-19},
    // One such block, which needs up to 2.6e-7 beyond the relative term (sim): 4 ulp of 1.
    {"transformer_block", 0x1p-21},
};

fixtures::Tolerance toleranceFor(const std::string& model, DType dtype) {
  if (dtype == DType::F64) return fixtures::kF64Tolerance;
  if (dtype != DType::F32) return {0, 1e-2};
  return fixtures::f32ToleranceFor(kLongSums, model);
}

std::string fixtureDir(const std::string& model) {
  return std::string(GXC_FIXTURE_DIR) + "/models/" + model;
}

// very_big_module_small's weights (1.6 MB) are not stored: make_model_fixtures.py's
// pattern_weights() defines them and this repeats it. Element i is
// ((31 i^2 + 7 i + salt) mod 1021 - 510) / 512 * 2^scaleLog2, exact in f32.
Tensor patternWeights(const Shape& shape, int64_t salt, int scaleLog2) {
  Tensor tensor(DType::F32, shape);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    int64_t k = (31 * i * i + 7 * i + salt) % 1021;
    tensor.as<float>()[i] = static_cast<float>(std::ldexp((k - 510) / 512.0, scaleLog2));
  }
  return tensor;
}

// Where the test writes very_big_module_small's weights: one file per process, since ctest
// may run this file's tests in parallel processes.
std::string patternWeightsPath() {
  return testing::TempDir() + "very_big_module_small." + std::to_string(getpid()) + ".safetensors";
}

std::string weightsFor(const std::string& model) {
  if (model != "very_big_module_small") return fixtureDir(model) + "/weights.safetensors";
  writeSafetensors(patternWeightsPath(), {{"GiantParameter1", patternWeights({1000, 200}, 1, -3)},
                                          {"GiantParameter2", patternWeights({200, 1000}, 2, -4)}});
  return patternWeightsPath();
}

// models/<model>.yaml, or the variant make_model_fixtures.py wrote beside its fixtures.
std::string modelFile(const std::string& model) {
  std::string variant = fixtureDir(model) + "/model.yaml";
  return fs::exists(variant) ? variant : std::string(GXC_SOURCE_DIR) + "/models/" + model + ".yaml";
}

// The model as `gxc run --weights W --placement P` compiles it for `devices` (default:
// --devices cpu), at the sizes of its `dims:`.
std::unique_ptr<Graph> compile(const std::string& model, std::vector<Device> devices = {},
                               const std::string& placement = "manual") {
  ModelOptions options;
  options.weightsPath = weightsFor(model);
  auto graph = loadModel(modelFile(model), options);
  PassContext context;
  context.placement = placement;
  if (!devices.empty()) context.target = Target::of(std::move(devices));
  PassManager(defaultPipeline()).run(*graph, context);
  return graph;
}

std::map<std::string, Tensor> fixtureInputs(const Graph& graph, const std::string& model) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] =
        readNpy(fixtureDir(model) + "/inputs/" + input->name + ".npy", input->type.dtype);
  return inputs;
}

// Checks every element of `got` against `want` within `tolerance`, reporting the worst
// element (by its error over its bound) and the absolute term that would have let every element
// through, rather than one failure per element.
void expectClose(const Tensor& got, const Tensor& want, const fixtures::Tolerance& tolerance,
                 const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_GT(want.numel(), 0) << what;
  double worst = -1, neededAtol = 0;
  int64_t worstAt = 0, failures = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.loadDouble(i), b = want.loadDouble(i);
    double error = std::abs(a - b);
    if (!std::isfinite(error))
      error = std::numeric_limits<double>::infinity();  // a NaN must fail, not compare false
    neededAtol = std::max(neededAtol, error - tolerance.rtol * std::abs(b));
    if (error == 0) continue;  // also an exact 0, whose bound may be 0
    double ratio = error / tolerance.bound(b);
    if (ratio > 1) ++failures;
    if (ratio > worst) worst = ratio, worstAt = i;
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << got.numel()
                         << " elements differ; worst is element " << worstAt << ", "
                         << got.loadDouble(worstAt) << " vs " << want.loadDouble(worstAt)
                         << " (error " << worst << " times atol " << tolerance.atol << " + rtol "
                         << tolerance.rtol << " * |expected|; an atol of " << neededAtol
                         << " would pass every element)";
}

class ModelNumericsTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    graph_ = compile(GetParam());
    inputs_ = fixtureInputs(*graph_, GetParam());
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove(patternWeightsPath(), ignored);
  }

  void expectMatchesTheFixture(const std::map<std::string, Tensor>& outputs,
                               const char* kernelName) {
    ASSERT_EQ(outputs.size(), graph_->outputs().size());
    for (const GraphOutput& output : graph_->outputs()) {
      std::string file = fixtureDir(GetParam()) + "/expected/" + output.name + ".npy";
      ASSERT_TRUE(fs::exists(file)) << "no expected values for output " << output.name;
      Tensor want = readNpy(file);
      expectClose(outputs.at(output.name), want, toleranceFor(GetParam(), want.dtype()),
                  std::string(kernelName) + " output " + output.name);
    }
  }

  std::unique_ptr<Graph> graph_;
  std::map<std::string, Tensor> inputs_;
};

TEST_P(ModelNumericsTest, EveryParamComesFromTheFixtureWeights) {
  // A param left to its init would hold values NumPy never saw.
  int params = 0;
  for (const Op* op : graph_->ops()) {
    if (op->kind != OpKind::Param) continue;
    ++params;
    EXPECT_EQ(op->attrs.getString("init", ""), "file") << "param " << op->layerName();
  }
  EXPECT_GT(params, 0);
}

TEST_P(ModelNumericsTest, ExpectedFilesMatchTheOutputs) {
  // A stale expected file (an output renamed or dropped) means the fixture is out of date.
  std::vector<std::string> files, outputs;
  for (const auto& entry : fs::directory_iterator(fixtureDir(GetParam()) + "/expected"))
    files.push_back(entry.path().stem().string());
  for (const GraphOutput& output : graph_->outputs()) outputs.push_back(output.name);
  std::sort(files.begin(), files.end());
  std::sort(outputs.begin(), outputs.end());
  EXPECT_EQ(files, outputs);
}

TEST_P(ModelNumericsTest, ReferenceKernelsMatchNumPy) {
  expectMatchesTheFixture(ReferenceExecutor(*graph_).run(inputs_), "reference");
}

TEST_P(ModelNumericsTest, CpuKernelsMatchNumPy) {
  expectMatchesTheFixture(HostExecutor(*graph_).run(inputs_), "cpu");
}

// Two virtual GPUs, each model's own annotations deciding (very_big_module_small's second
// matmul is on cuda:1): copies, streams and events, with the cpu platform's kernels.
TEST_P(ModelNumericsTest, SimMatchesTheFixture) {
  auto graph = compile(GetParam(), {Device::cuda(0), Device::cuda(1)});
  SimConfig config;
  config.gpus = 2;
  config.memoryPerGpu = int64_t{1} << 30;
  expectMatchesTheFixture(SimExecutor(*graph, config).run(inputs_), "sim");
}

// Placement moves work and never changes answers: the same two virtual GPUs under every
// --placement, each run checked against the fixture.
TEST_P(ModelNumericsTest, SimMatchesTheFixtureUnderEveryPlacement) {
  for (const char* placement : {"auto", "data-parallel", "pipeline"}) {
    SCOPED_TRACE(placement);
    auto graph = compile(GetParam(), {Device::cuda(0), Device::cuda(1)}, placement);
    SimConfig config;
    config.gpus = 2;
    config.memoryPerGpu = int64_t{1} << 30;
    expectMatchesTheFixture(SimExecutor(*graph, config).run(inputs_), placement);
  }
}

TEST_P(ModelNumericsTest, ReferenceAndCpuAgree) {
  // Each is within the tolerance of the fixture; they are within it of each other too.
  std::map<std::string, Tensor> reference = ReferenceExecutor(*graph_).run(inputs_);
  std::map<std::string, Tensor> cpu = HostExecutor(*graph_).run(inputs_);
  for (const GraphOutput& output : graph_->outputs())
    expectClose(cpu.at(output.name), reference.at(output.name),
                toleranceFor(GetParam(), output.value->type.dtype), "output " + output.name);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelNumericsTest,
                         testing::Values("mlp", "very_big_module_small", "transformer_block",
                                         "losses", "mlp_f16", "mlp_bf16", "transformer_block_f16",
                                         "transformer_block_bf16", "gpt_decoder", "vit_tiny",
                                         "lenet", "resnet_cifar"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace gxc
