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

namespace gxc {
namespace {

namespace fs = std::filesystem;

// The tolerances of docs/architecture.md (Generated kernels), per element:
// |gxc - fixture| <= tolerance * max(1, |fixture|).
// f32: 1e-5. Every output is off from NumPy's float64 value by float32 rounding alone, and the
// fixtures keep activations of order 1 (see make_model_fixtures.py); the worst seen is 1.8e-6,
// in very_big_module_small's 1000-term OpenBLAS dot products (cpu and sim).
// f16 and bf16: 1e-2. The reference rounds every op's result to the dtype as PyTorch does, and
// matches it exactly; the fused kernels of cpu and sim keep their members' results in f32,
// which moves transformer_block's output by up to 9.5e-4 (f16) and 6.8e-3 (bf16).
double toleranceFor(DType dtype) { return dtype == DType::F32 ? 1e-5 : 1e-2; }

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

// Checks every element of `got` against `want` within toleranceFor(dtype) * max(1, |want|),
// reporting the worst element rather than one failure per element.
void expectClose(const Tensor& got, const Tensor& want, const std::string& what) {
  const double tolerance = toleranceFor(want.dtype());
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_GT(want.numel(), 0) << what;
  double worst = -1;
  int64_t worstAt = 0, failures = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.loadFloat(i), b = want.loadFloat(i);
    double error = std::abs(a - b) / std::max(1.0, std::abs(b));
    if (!std::isfinite(error))
      error = std::numeric_limits<double>::infinity();  // a NaN must fail, not compare false
    if (error > tolerance) ++failures;
    if (error > worst) worst = error, worstAt = i;
  }
  EXPECT_LE(worst, tolerance) << what << ": " << failures << " of " << got.numel()
                              << " elements differ; worst is element " << worstAt << ", "
                              << got.loadFloat(worstAt) << " vs " << want.loadFloat(worstAt);
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
      expectClose(outputs.at(output.name), readNpy(file),
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
    expectClose(cpu.at(output.name), reference.at(output.name), "output " + output.name);
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
