// The PTX the cuda platform loads, checked where the CUDA toolkit is and no GPU need be: every
// kernel of every op fixture (tests/fixtures/ops.json) and of the fused models, placed on
// cuda:0, in one translation unit compiled by NVRTC and assembled by ptxas (which finds what
// NVRTC's PTX output alone does not: register and parameter limits, malformed PTX); the
// program the executor builds from it; and the cuBLASLt epilogue each fused GEMM becomes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "codegen/cuda_source.h"
#include "codegen/nvrtc_compiler.h"
#include "frontend/model_loader.h"
#include "ir/kernel_steps.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/cuda/cuda_kernels.h"
#include "tests/unit/op_fixture_graph.h"

namespace gxc {
namespace {

std::unique_ptr<Graph> compiledModel(const std::string& name) {
  auto graph = loadModel(std::string(GXC_SOURCE_DIR) + "/models/" + name);
  PassContext context;
  context.target = Target::of({Device::cuda(0)});
  PassManager manager;
  for (const std::string& pass : defaultPipeline()) manager.add(pass);
  manager.run(*graph, context);
  return graph;
}

// Compiles `graph`'s kernels for sm_80 and sm_90 and assembles each PTX with ptxas.
void expectPtxAssembles(const Graph& graph, const std::string& what) {
#ifndef GXC_PTXAS
  GTEST_SKIP() << "ptxas was not found with the CUDA toolkit";
#else
  CudaSource source = generateCudaSource(graph);
  ASSERT_FALSE(source.kernels.empty()) << what;
  std::filesystem::path directory = std::filesystem::temp_directory_path() /
                                    ("gxc-ptxas-test-" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(directory);
  KernelCache cache = KernelCache::fromEnvironment();
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string ptx =
        compileGraphPtx(source.text, std::string(kernelHeaderText()), parseGpuArch(arch), cache);
    for (const CudaKernel& kernel : source.kernels)
      EXPECT_NE(ptx.find(".entry " + kernel.name + "("), std::string::npos)
          << what << ": " << kernel.name << " is not in the PTX for " << arch;
    std::filesystem::path file = directory / (std::string(arch) + ".ptx");
    std::ofstream(file) << ptx;
    std::string command = std::string(GXC_PTXAS) + " -arch=" + arch + " " + file.string() + " -o " +
                          (directory / (std::string(arch) + ".cubin")).string();
    EXPECT_EQ(std::system(command.c_str()), 0) << what << ": " << command;
  }
  std::filesystem::remove_all(directory);
#endif
}

TEST(NvrtcFixtureKernels, EveryOpFixtureKernelAssemblesWithPtxas) {
  fixtures::OpFixtureGraph g = fixtures::buildOpFixtureGraph({Device::cuda(0)});
  EXPECT_GT(generateCudaSource(*g.graph).kernels.size(), 80u);
  expectPtxAssembles(*g.graph, "op fixtures");
}

class NvrtcModelKernels : public testing::TestWithParam<std::string> {};

TEST_P(NvrtcModelKernels, FusedModelKernelsAssembleWithPtxas) {
  expectPtxAssembles(*compiledModel(GetParam() + ".yaml"), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Models, NvrtcModelKernels,
                         testing::Values("transformer_block", "mlp", "losses"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// What the executor launches: one kernel per generated step, GxcArgs {result, step inputs},
// and no epilogue kernel (cuBLASLt applies it). The text is one unit, so the host's steps
// are in it too; the executor never launches those.
TEST(NvrtcFixtureKernels, TheProgramLaunchesEveryGeneratedStepAndNoEpilogue) {
  auto graph = parseGraph(R"(
graph @g(%x: f32[16,8] @cpu, %b: f32[8,4] @cpu, %c: f32[4] @cpu) -> (y, t) {
  %p = matmul %x, %b : f32[16,4] @?
  %q = add %p, %c : f32[16,4] @?
  %r = relu %q : f32[16,4] @?
  %s = softmax %r {axis = -1} : f32[16,4] @?
  %y = mul %s {scalar = 2.0} : f32[16,4] @?
  %t = transpose %x {perm = [1, 0]} : f32[8,16] @?
  return %y, %t
})",
                          "g.gxir");
  PassContext context;
  context.target = Target::of({Device::cuda(0)});
  PassManager manager;
  for (const std::string& pass : defaultPipeline()) manager.add(pass);
  manager.run(*graph, context);
  KernelSteps steps(*graph);
  KernelCache cache = KernelCache::fromEnvironment();
  CudaProgram program = buildCudaProgram(*graph, parseGpuArch("sm_90"), cache);
  size_t generated = 0, fusedGemms = 0;
  for (const KernelStep& step : steps.steps()) {
    if (step.kind == StepKind::Gemm && step.ops.size() == 3) ++fusedGemms;
    if (step.kind != StepKind::Generated) {
      EXPECT_EQ(program.kernels.count(step.root()), 0u) << step.root()->layerName();
      continue;
    }
    generated += step.root()->device().isCuda();  // and host steps (the inputs' packing)
    ASSERT_EQ(program.kernels.count(step.root()), 1u) << step.root()->layerName();
    const CudaKernelLaunch& launch = program.kernels.at(step.root());
    EXPECT_EQ(launch.inputs, step.inputs) << step.root()->layerName();
    EXPECT_GE(launch.grid[0], 1u);
    EXPECT_EQ(launch.block[0] % 32, 0u) << "row kernels need whole warps";
    EXPECT_NE(program.ptx.find(".entry " + launch.name + "("), std::string::npos);
  }
  EXPECT_EQ(generated, 3u) << "on cuda:0: softmax + mul, transpose, the outputs' packing";
  EXPECT_EQ(fusedGemms, 1u) << "matmul + add + relu is one GEMM step";
}

TEST(NvrtcFixtureKernels, NoPtxIsBuiltForAGraphOfGemmsOnly) {
  auto graph = parseGraph(R"(
graph @g(%a: f32[4,8] @cuda:0, %b: f32[8,2] @cuda:0) -> (y) {
  %y = matmul %a, %b : f32[4,2] @cuda:0
  return %y
})",
                          "g.gxir");
  KernelCache cache(std::nullopt);
  CudaProgram program = buildCudaProgram(*graph, parseGpuArch("sm_90"), cache);
  EXPECT_TRUE(program.kernels.empty());
  EXPECT_TRUE(program.ptx.empty());
  EXPECT_EQ(cache.stats().compiles, 0);
}

// Fused GEMM steps as cuBLASLt calls: the bias add (either operand order) and the activation
// become the epilogue; linear keeps its own bias.
TEST(NvrtcFixtureKernels, FusedGemmStepsBecomeCublasLtEpilogues) {
  auto graph = parseGraph(R"(
graph @g(%a: f32[6,5] @cuda:0, %b: f32[7,5] @cuda:0, %bias: f32[7] @cuda:0, %w: f32[4,7] @cuda:0, %c: f32[4] @cuda:0) -> (r, s, t) {
  %p = matmul %a, %b {kernel = "k0", transpose_b = true} : f32[6,7] @cuda:0
  %q = add %bias, %p {kernel = "k0"} : f32[6,7] @cuda:0
  %r = gelu %q {approximate = "tanh", kernel = "k0"} : f32[6,7] @cuda:0
  %l = linear %r, %w, %c {in_features = 7, kernel = "k1", out_features = 4} : f32[6,4] @cuda:0
  %s = relu %l {kernel = "k1"} : f32[6,4] @cuda:0
  %t = matmul %a, %b {transpose_b = true} : f32[6,7] @cuda:0
  return %r, %s, %t
})",
                          "g.gxir");
  KernelSteps steps(*graph);
  const auto& all = steps.steps();
  ASSERT_EQ(all.size(), 3u);

  CudaGemm gelu = describeGemm(all[0]);
  EXPECT_TRUE(gelu.transposeB);
  EXPECT_TRUE(gelu.bias);
  EXPECT_EQ(gelu.activation, GemmActivation::Gelu);
  EXPECT_EQ(gelu.aValue->name, "a");
  EXPECT_EQ(gelu.bValue->name, "b");
  EXPECT_EQ(gelu.biasValue->name, "bias");

  CudaGemm relu = describeGemm(all[1]);
  EXPECT_TRUE(relu.bias);
  EXPECT_EQ(relu.activation, GemmActivation::Relu);
  EXPECT_EQ(relu.biasValue->name, "c");
  EXPECT_EQ(relu.out, (Shape{6, 4}));

  CudaGemm plain = describeGemm(all[2]);
  EXPECT_FALSE(plain.bias);
  EXPECT_EQ(plain.biasValue, nullptr);
  EXPECT_EQ(plain.activation, GemmActivation::None);
}

}  // namespace
}  // namespace gxc
