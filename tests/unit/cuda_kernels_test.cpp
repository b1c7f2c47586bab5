// What the cuda platform builds from codegen's kernels, checked where the CUDA toolkit is and
// no GPU need be (runtime/cuda/cuda_kernels.h, cuda_gemm.h): the program the executor launches,
// one kernel per generated step, and the cuBLASLt epilogue each fused GEMM becomes.
#include <gtest/gtest.h>

#include "codegen/gpu_arch.h"
#include "codegen/kernel_cache.h"
#include "ir/kernel_steps.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/cuda/cuda_kernels.h"

namespace gxc {
namespace {

// What the executor launches: one kernel per generated step, GxcArgs {result, step inputs};
// a fused GEMM's epilogue kernel is kept apart, for when cuBLASLt has no algorithm with the
// epilogue. The text is one unit, so the host's steps are in it too; the executor never
// launches those.
TEST(CudaKernelsTest, TheProgramLaunchesEveryGeneratedStepAndKeepsEachGemmEpilogue) {
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
  PassManager(defaultPipeline()).run(*graph, context);
  KernelSteps steps(*graph);
  KernelCache cache = KernelCache::fromEnvironment();
  CudaProgram program = buildCudaProgram(*graph, parseGpuArch("sm_90"), cache);
  size_t generated = 0, fusedGemms = 0;
  for (const KernelStep& step : steps.steps()) {
    if (step.kind == StepKind::Gemm && step.ops.size() == 3) {
      ++fusedGemms;
      ASSERT_EQ(program.epilogues.count(step.root()), 1u) << step.root()->layerName();
      const CudaKernelLaunch& epilogue = program.epilogues.at(step.root());
      ASSERT_EQ(epilogue.inputs.size(), 2u);
      EXPECT_EQ(epilogue.inputs[0], step.first()->result) << "the GEMM's result comes first";
      EXPECT_EQ(epilogue.inputs[1]->name, "c.cuda0") << "then the bias, copied to the GPU";
      EXPECT_NE(program.ptx.find(".entry " + epilogue.name + "("), std::string::npos);
    }
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
  EXPECT_EQ(program.epilogues.size(), 1u);
}

TEST(CudaKernelsTest, NoPtxIsBuiltForAGraphOfUnfusedGemmsOnly) {
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
TEST(CudaKernelsTest, FusedGemmStepsBecomeCublasLtEpilogues) {
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

  // Without cuBLASLt's epilogue: the matmul's bias add and gelu are the epilogue kernel's; the
  // linear keeps its own bias, and only relu is the kernel's.
  EXPECT_FALSE(gelu.linearBias);
  EXPECT_TRUE(gelu.fusedMembers);
  EXPECT_TRUE(relu.linearBias);
  EXPECT_TRUE(relu.fusedMembers);

  CudaGemm plain = describeGemm(all[2]);
  EXPECT_FALSE(plain.linearBias);
  EXPECT_FALSE(plain.fusedMembers);
  EXPECT_FALSE(plain.bias);
  EXPECT_EQ(plain.biasValue, nullptr);
  EXPECT_EQ(plain.activation, GemmActivation::None);
  EXPECT_FALSE(plain.generatedEpilogue);
  EXPECT_FALSE(gelu.generatedEpilogue);
}

// Epilogues cuBLASLt has none for (the exact gelu, a residual add, relu after a residual) are
// left whole to the generated epilogue kernel: the GEMM keeps only a linear's own bias.
TEST(CudaKernelsTest, EpiloguesCublasLtLacksAreGeneratedWhole) {
  auto graph = parseGraph(R"(
graph @g(%a: f32[6,5] @cuda:0, %w: f32[7,5] @cuda:0, %c: f32[7] @cuda:0, %b: f32[5,7] @cuda:0, %bias: f32[7] @cuda:0, %res: f32[6,7] @cuda:0) -> (r, s, t) {
  %l = linear %a, %w, %c {in_features = 5, kernel = "k0", out_features = 7} : f32[6,7] @cuda:0
  %r = gelu %l {kernel = "k0"} : f32[6,7] @cuda:0
  %p = matmul %a, %b {kernel = "k1"} : f32[6,7] @cuda:0
  %q = add %p, %bias {kernel = "k1"} : f32[6,7] @cuda:0
  %u = relu %q {kernel = "k1"} : f32[6,7] @cuda:0
  %s = add %res, %u {kernel = "k1"} : f32[6,7] @cuda:0
  %m = matmul %a, %b {kernel = "k2"} : f32[6,7] @cuda:0
  %n = add %m, %res {kernel = "k2"} : f32[6,7] @cuda:0
  %t = relu %n {kernel = "k2"} : f32[6,7] @cuda:0
  return %r, %s, %t
})",
                          "g.gxir");
  KernelSteps steps(*graph);
  const auto& all = steps.steps();
  ASSERT_EQ(all.size(), 3u);
  for (const KernelStep& step : all) {
    CudaGemm gemm = describeGemm(step);
    EXPECT_TRUE(gemm.generatedEpilogue) << step.kernelAttr;
    EXPECT_TRUE(gemm.fusedMembers) << step.kernelAttr;
    EXPECT_EQ(gemm.activation, GemmActivation::None) << step.kernelAttr;
  }
  CudaGemm linear = describeGemm(all[0]);
  EXPECT_TRUE(linear.bias);
  EXPECT_TRUE(linear.linearBias);
  EXPECT_EQ(linear.biasValue->name, "c");
  CudaGemm matmul = describeGemm(all[1]);  // its bias add is the kernel's, with the rest
  EXPECT_FALSE(matmul.bias);
  EXPECT_EQ(matmul.biasValue, nullptr);
}

}  // namespace
}  // namespace gxc
