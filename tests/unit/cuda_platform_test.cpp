// The cuda platform end to end on a real GPU, against the host reference interpreter: every
// op fixture (tests/fixtures/ops.json) as codegen's kernel, cuBLASLt, cuDNN or a view; the fused
// models (fused GEMM epilogues through cuBLASLt, fused elementwise and row kernels); and
// indices out of range refused with the host's messages, whether they come straight from an
// input or were computed on the GPU. Skipped, visibly, where there is no GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "cuda_test_helpers.h"
#include "cuda_tolerances.h"
#include "frontend/model_loader.h"
#include "ir/memory_attrs.h"
#include "ir/parser.h"
#include "output_compare.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "tests/unit/op_fixture_graph.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

using fixtures::OpCase;

void compile(Graph& graph, std::vector<Device> devices) {
  PassContext context;
  context.target = Target::of(std::move(devices));
  PassManager(defaultPipeline()).run(graph, context);
}

CudaConfig firstGpus(int count) {
  CudaConfig config;
  for (int i = 0; i < count; ++i) config.deviceMap.push_back(i);
  return config;
}

// All fixture cases in one graph on cuda:0, run once; and the same graph on the host by the
// reference interpreter.
struct FixtureRuns {
  std::map<std::string, Tensor> gpu, reference;
  std::string error;  // of the GPU run, if it failed
};

const FixtureRuns& fixtureRuns() {
  static const FixtureRuns runs = [] {
    FixtureRuns r;
    fixtures::OpFixtureGraph host = fixtures::buildOpFixtureGraph({Device::cpu()});
    r.reference = ReferenceExecutor(*host.graph).run(host.inputs);
    fixtures::OpFixtureGraph gpu = fixtures::buildOpFixtureGraph({Device::cuda(0)});
    try {
      CudaExecutor executor(*gpu.graph, firstGpus(1));
      r.gpu = executor.run(gpu.inputs);
    } catch (const Error& error) {
      r.error = formatError(error);
    }
    return r;
  }();
  return runs;
}

class CudaPlatformFixtureTest : public testing::TestWithParam<OpCase> {};

TEST_P(CudaPlatformFixtureTest, MatchesTheReference) {
  GXC_REQUIRE_GPUS(1);
  const OpCase& c = GetParam();
  const FixtureRuns& runs = fixtureRuns();
  ASSERT_EQ(runs.error, "");
  const Tensor& got = runs.gpu.at(c.name);
  const Tensor& want = runs.reference.at(c.name);
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  double tolerance = gputol::generatedKernelTolerance(want.dtype());
  if (c.op == "matmul" || c.op == "linear") {  // cuBLASLt, not a generated kernel
    const Shape& a = c.inputs.at(0).shape;
    bool transposed = c.attrs.value("transpose_a", false);
    tolerance = gputol::gemmTolerance(want.dtype(), transposed ? a[a.size() - 2] : a.back());
  }
  if (c.op == "conv2d" || c.op == "conv_transpose2d") {  // cuDNN, or the generated kernel
    const Shape& w = c.inputs.at(1).shape;               // [., in / groups or out / groups, kh, kw]
    int64_t groups = c.attrs.value("groups", 1);
    int64_t perGroup = c.op == "conv2d" ? w[1] : w[0] / groups;
    tolerance =
        std::max(tolerance, gputol::cudnnConvTolerance(want.dtype(), perGroup * w[2] * w[3]));
  }
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (isInteger(want.dtype())) {
      EXPECT_EQ(got.loadInt(i), want.loadInt(i)) << "element " << i;
      continue;
    }
    double expected = want.loadDouble(i);  // exact for f64 too
    if (std::isnan(expected)) {            // NaN rows (fully masked attention, nan inputs) stay NaN
      EXPECT_TRUE(std::isnan(got.loadDouble(i))) << "element " << i << " is not NaN";
      continue;
    }
    if (std::isinf(expected)) {
      EXPECT_EQ(got.loadDouble(i), expected) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got.loadDouble(i), expected, tolerance * std::max(1.0, std::abs(expected)))
        << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaPlatformFixtureTest,
                         testing::ValuesIn(fixtures::allOpCases()),
                         [](const testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

// A model on `gpus` GPUs (its layers on cuda:0 unless annotated) against the reference;
// `withoutCublasLtEpilogues`: as if cuBLASLt had no algorithm with an epilogue.
void expectModelMatchesTheReference(const std::string& model, int gpus, size_t expectedFusedGemms,
                                    bool withoutCublasLtEpilogues = false,
                                    bool expectsFusion = true) {
  std::string path = std::string(GXC_SOURCE_DIR) + "/models/" + model;
  auto reference = loadModel(path);
  compile(*reference, {Device::cpu()});
  std::map<std::string, Tensor> inputs;
  for (const Value* input : reference->inputs())
    inputs[input->name] = defaultInput(*reference, *input, reference->attrs().getInt("seed", 0));
  auto expected = ReferenceExecutor(*reference).run(inputs);

  auto graph = loadModel(path);
  std::vector<Device> devices;
  for (int i = 0; i < gpus; ++i) devices.push_back(Device::cuda(i));
  compile(*graph, devices);
  size_t fusedGemms = 0, fused = 0;
  KernelSteps steps(*graph);
  for (const KernelStep& step : steps.steps()) {
    fused += step.ops.size() > 1;
    fusedGemms += step.kind == StepKind::Gemm && step.ops.size() > 1;
  }
  EXPECT_EQ(fusedGemms, expectedFusedGemms) << model;
  if (expectsFusion) {
    EXPECT_GT(fused, 0u) << model << ": the fuse pass fused nothing";
  }
  CudaConfig config = firstGpus(gpus);
  config.pretendNoGemmEpilogueAlgorithm = withoutCublasLtEpilogues;
  CudaExecutor executor(*graph, config);
  double tolerance = gputol::graphTolerance(*graph);
  expectOutputsCloseNormwise(executor.run(inputs), expected, tolerance);
  // A second run reuses the loaded kernels and cached blocks: the same answer.
  expectOutputsCloseNormwise(executor.run(inputs), expected, tolerance);
  if (withoutCublasLtEpilogues) {
    EXPECT_GT(executor.gemmStats(0).fallbacks, 0);
  }
}

TEST(CudaPlatformModels, MlpWithFusedGemmEpiloguesMatchesTheReference) {
  GXC_REQUIRE_GPUS(1);
  expectModelMatchesTheReference("mlp.yaml", 1, 2);  // fc1 + relu, fc2 + relu
}

// The plain GEMM onto the linear's bias, then the generated epilogue kernel for relu: the
// same answers as cuBLASLt's epilogues.
TEST(CudaPlatformModels, MlpWithoutCublasLtEpiloguesMatchesTheReference) {
  GXC_REQUIRE_GPUS(1);
  expectModelMatchesTheReference("mlp.yaml", 1, 2, /*withoutCublasLtEpilogues=*/true);
}

TEST(CudaPlatformModels, TransformerBlockMatchesTheReference) {
  GXC_REQUIRE_GPUS(1);
  // Nothing to fuse: the attention is one kernel already, and the GEMMs' neighbours (reshapes,
  // residual adds, an erf gelu) are none that cuBLASLt folds.
  expectModelMatchesTheReference("transformer_block.yaml", 1, 0, false, /*expectsFusion=*/false);
}

// A matmul's bias add and gelu(tanh) folded into cuBLASLt's GELU_BIAS epilogue.
TEST(CudaPlatformModels, MatmulBiasGeluTanhEpilogueMatchesTheReference) {
  GXC_REQUIRE_GPUS(1);
  const char* text = R"(
graph @mm(%a: f32[64,32] @cpu, %b: f32[32,48] @cpu) -> (r) attributes {seed = 3} {
  %bias = param {init = "normal", name = "bias", seed = 3} : f32[48] @?
  %p = matmul %a, %b : f32[64,48] @?
  %q = add %p, %bias : f32[64,48] @?
  %r = gelu %q {approximate = "tanh"} : f32[64,48] @?
  return %r
})";
  auto reference = parseGraph(text, "mm.gxir");
  compile(*reference, {Device::cpu()});
  std::map<std::string, Tensor> inputs;
  for (const Value* input : reference->inputs())
    inputs[input->name] = defaultInput(*reference, *input, 3);
  auto expected = ReferenceExecutor(*reference).run(inputs);
  auto graph = parseGraph(text, "mm.gxir");
  compile(*graph, {Device::cuda(0)});
  bool fused = false;
  KernelSteps steps(*graph);
  for (const KernelStep& step : steps.steps())
    fused |= step.kind == StepKind::Gemm && step.ops.size() == 3;
  ASSERT_TRUE(fused) << "matmul, add and gelu must be one GEMM step";
  CudaExecutor executor(*graph, firstGpus(1));
  expectOutputsCloseNormwise(executor.run(inputs), expected, gputol::graphTolerance(*graph));
  // Without cuBLASLt's epilogue: the plain matmul, then the generated bias add and gelu.
  CudaConfig config = firstGpus(1);
  config.pretendNoGemmEpilogueAlgorithm = true;
  CudaExecutor fallback(*graph, config);
  expectOutputsCloseNormwise(fallback.run(inputs), expected, gputol::graphTolerance(*graph));
  EXPECT_EQ(fallback.gemmStats(0).fallbacks, 1);
}

TEST(CudaPlatformModels, TransformerBlockOnTwoGpusMatchesTheReference) {
  GXC_REQUIRE_GPUS(2);
  expectModelMatchesTheReference("transformer_block.yaml", 2, 0, false, /*expectsFusion=*/false);
}

// Indices out of range: from an input (checked on the host when the run starts) and computed
// on the GPU (a concat there; read back before the lookup). Either way the host's message,
// exit status 3, and the executor runs again afterwards.
TEST(CudaPlatformErrors, EmbeddingIndicesOutOfRangeAreRefusedWithTheHostMessage) {
  GXC_REQUIRE_GPUS(1);
  const char* text = R"(
graph @lookup(%i: i64[4] @cpu, %j: i64[2] @cpu) -> (e, f) attributes {seed = 0} {
  %table = param {init = "normal", name = "table", seed = 0} : f32[5,8] @?
  %e = embedding %i, %table {embedding_dim = 8, num_embeddings = 5} : f32[4,8] @?
  %k = concat %j, %j {axis = 0} : i64[4] @?
  %f = embedding %k, %table {embedding_dim = 8, num_embeddings = 5} : f32[4,8] @?
  return %e, %f
})";
  auto graph = parseGraph(text, "lookup.gxir");
  compile(*graph, {Device::cuda(0)});
  CudaExecutor executor(*graph, firstGpus(1));
  auto ints = [](std::vector<int64_t> values) {
    Tensor tensor(DType::I64, {static_cast<int64_t>(values.size())});
    for (size_t i = 0; i < values.size(); ++i) tensor.storeInt(static_cast<int64_t>(i), values[i]);
    return tensor;
  };
  auto messageOf = [&](std::map<std::string, Tensor> inputs) -> std::string {
    try {
      executor.run(inputs);
    } catch (const Error& error) {
      EXPECT_EQ(error.exitStatus(), 3);
      return error.message();
    }
    return "accepted";
  };
  EXPECT_EQ(messageOf({{"i", ints({0, 1, 5, 2})}, {"j", ints({1, 2})}}),
            "layer 'e': embedding index 5 is out of range [0, 5)");
  EXPECT_EQ(messageOf({{"i", ints({0, 1, 4, 2})}, {"j", ints({1, -1})}}),
            "layer 'f': embedding index -1 is out of range [0, 5)");
  auto good = executor.run({{"i", ints({0, 1, 4, 2})}, {"j", ints({1, 3})}});
  EXPECT_EQ(good.at("f").shape(), (Shape{4, 8}));
  // The table (160 bytes, rounded to 512) and the activations' arena stay; nothing else.
  int64_t arena = graph->attrs().getInt(arenaAttrName(Device::cuda(0)), -1);
  ASSERT_GT(arena, 0);
  EXPECT_EQ(executor.memoryStats(Device::cuda(0)).allocatedBytes, 512 + (arena + 511) / 512 * 512);
}

// A batch cut into micro-batches on the host (pipeline; data-parallel's shards alike): each
// micro-batch's indices are checked in the host's slice, before its copy to the GPU
// (runtime/cuda/gpu_index_checks.h), with the message of the micro-batch's layer.
TEST(CudaPlatformErrors, IndicesOfAMicroBatchAreRefusedOnTheHostBeforeTheScatter) {
  GXC_REQUIRE_GPUS(1);
  auto graph = parseGraph(R"(
graph @lookup(%i: i64[8] @cpu) -> (e) attributes {seed = 0} {
  %table = param {init = "normal", name = "table", seed = 0} : f32[10,4] @?
  %e = embedding %i, %table {embedding_dim = 4, num_embeddings = 10} : f32[8,4] @?
  return %e
})",
                          "lookup.gxir");
  PassContext context;
  context.target = Target::of({Device::cuda(0)});
  context.placement = "pipeline";
  context.microbatches = 2;
  PassManager(defaultPipeline()).run(*graph, context);
  CudaExecutor executor(*graph, firstGpus(1));
  Tensor bad(DType::I64, {8});
  for (int64_t i = 0; i < 8; ++i) bad.storeInt(i, i == 6 ? 12 : i);
  try {
    executor.run({{"i", bad}});
    ADD_FAILURE() << "index 12 of a table of 10 rows was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.exitStatus(), 3);
    EXPECT_EQ(error.message(), "layer 'e.mb1': embedding index 12 is out of range [0, 10)");
  }
}

}  // namespace
}  // namespace gxc
