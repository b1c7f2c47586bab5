// Whole models against NumPy: each model of models/ that runs here is loaded with the weights
// of tests/fixtures/models/<model>/, compiled by the default pipeline for `--devices cpu`, run
// with both host kernel sets (the reference interpreter, and the cpu platform's OpenBLAS
// GEMMs and generated kernels), and its outputs compared with the ones make_model_fixtures.py
// computed in NumPy, an implementation that shares no code with gxc.
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
#include "tensor/npy.h"
#include "tensor/safetensors.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

// The tolerance of the op tests, unloosened: |gxc - NumPy| <= 1e-5 * max(1, |NumPy|). Every
// output is off from NumPy's float64 value by float32 rounding alone, and the fixtures keep
// activations of order 1 (see make_model_fixtures.py), so the absolute error is what float32
// accumulation gives: the worst seen is 1.8e-6, in very_big_module_small's 1000-term OpenBLAS
// dot products; the transformer block's is 2.4e-7.
constexpr double kRelativeTolerance = 1e-5;

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

// The model as `gxc run --devices cpu --weights W` compiles it.
std::unique_ptr<Graph> compile(const std::string& model) {
  ModelOptions options;
  options.weightsPath = weightsFor(model);
  auto graph = loadModel(std::string(GXC_SOURCE_DIR) + "/models/" + model + ".yaml", options);
  PassManager manager;
  for (const std::string& pass : defaultPipeline()) manager.add(pass);
  manager.run(*graph, PassContext{});
  return graph;
}

std::map<std::string, Tensor> fixtureInputs(const Graph& graph, const std::string& model) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] =
        readNpy(fixtureDir(model) + "/inputs/" + input->name + ".npy", input->type.dtype);
  return inputs;
}

// Checks every element of `got` against `want` within kRelativeTolerance * max(1, |want|),
// reporting the worst element rather than one failure per element.
void expectClose(const Tensor& got, const Tensor& want, const std::string& what) {
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
    if (error > kRelativeTolerance) ++failures;
    if (error > worst) worst = error, worstAt = i;
  }
  EXPECT_LE(worst, kRelativeTolerance)
      << what << ": " << failures << " of " << got.numel() << " elements differ; worst is element "
      << worstAt << ", " << got.loadFloat(worstAt) << " vs " << want.loadFloat(worstAt);
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

  void expectMatchesNumPy(const std::map<std::string, Tensor>& outputs, const char* kernelName) {
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
  expectMatchesNumPy(ReferenceExecutor(*graph_).run(inputs_), "reference");
}

TEST_P(ModelNumericsTest, CpuKernelsMatchNumPy) {
  expectMatchesNumPy(HostExecutor(*graph_).run(inputs_), "cpu");
}

TEST_P(ModelNumericsTest, ReferenceAndCpuAgree) {
  // They differ only in the GEMMs (double accumulation in the reference, OpenBLAS's float
  // accumulation on cpu), so what NumPy allows each, they allow each other.
  std::map<std::string, Tensor> reference = ReferenceExecutor(*graph_).run(inputs_);
  std::map<std::string, Tensor> cpu = HostExecutor(*graph_).run(inputs_);
  for (const GraphOutput& output : graph_->outputs())
    expectClose(cpu.at(output.name), reference.at(output.name), "output " + output.name);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelNumericsTest,
                         testing::Values("mlp", "very_big_module_small", "transformer_block",
                                         "losses"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace gxc
