// A fused GEMM's epilogue as oneDNN's post-ops (runtime/host/cpu_gemm.h, cpuGemmWithEpilogue):
// each chain the fuse pass allows after a GEMM, computed in the one call, against the reference
// interpreter op by op; and the cases it leaves to the generated epilogue (not f32, an empty
// GEMM, a relu), where it must write nothing.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/kernel_steps.h"
#include "ir/parser.h"
#include "output_compare.h"
#include "random_tensor.h"
#include "runtime/host/cpu_gemm.h"
#include "runtime/reference/reference_ops.h"

namespace gxc {
namespace {

// The graph's one fused step, its inputs random, run by cpuGemmWithEpilogue into `result`;
// `expected` is the reference interpreter's, op by op.
struct EpilogueRun {
  bool took = false;
  Tensor result, expected;
};

EpilogueRun runFused(const std::string& text) {
  auto graph = parseGraph(text, "epilogue.gxir");
  KernelSteps steps(*graph);
  const KernelStep& step = steps.steps().back();
  EXPECT_EQ(step.kind, StepKind::Gemm);
  std::map<const Value*, Tensor> values;
  unsigned seed = 1;
  for (const Value* input : graph->inputs())
    values[input] = randomTensor(input->type.dtype, input->type.shape, seed++);
  for (const Op* op : graph->ops()) {
    std::vector<const Tensor*> operands;
    for (const Value* operand : op->operands) operands.push_back(&values.at(operand));
    values[op->result] = evaluateReferenceOp(*op, operands);
  }
  std::vector<const Value*> inputs(graph->inputs().begin(), graph->inputs().end());
  std::vector<ConstTensorView> views;
  for (const Value* input : inputs) views.push_back(values.at(input).view());
  const StepTensors tensors(inputs, views);
  const Op& gemm = *step.first();
  std::vector<ConstTensorView> operands;
  for (const Value* operand : gemm.operands) operands.push_back(tensors.at(operand));
  std::vector<const Op*> epilogue(step.ops.begin() + 1, step.ops.end());
  EpilogueRun run;
  const TensorType& type = step.root()->result->type;
  run.result = Tensor(type.dtype, type.shape);
  for (int64_t i = 0; i < run.result.numel(); ++i) run.result.storeFloat(i, 7.0f);  // a marker
  run.took = cpuGemmWithEpilogue(gemm, operands, run.result.view(), nullptr, epilogue, tensors);
  run.expected = values.at(step.root()->result);
  return run;
}

// The graph's fused step, taken whole by the post-ops and matching the reference.
void expectPostOpsMatchTheReference(const std::string& text) {
  EpilogueRun run = runFused(text);
  ASSERT_TRUE(run.took);
  expectOutputsClose({{"r", run.result}}, {{"r", run.expected}}, 1e-5);
}

TEST(CpuGemmEpilogueTest, LinearWithExactGeluThenResidual) {
  expectPostOpsMatchTheReference(R"(
graph @g(%x: f32[2,5,24] @cpu, %w: f32[40,24] @cpu, %b: f32[40] @cpu, %res: f32[2,5,40] @cpu) -> (r) {
  %p = linear %x, %w, %b {in_features = 24, kernel = "k0", out_features = 40} : f32[2,5,40] @cpu
  %g = gelu %p {kernel = "k0"} : f32[2,5,40] @cpu
  %r = add %res, %g {kernel = "k0"} : f32[2,5,40] @cpu
  return %r
})");
}

TEST(CpuGemmEpilogueTest, MatmulWithBiasResidualAndTanhGelu) {
  expectPostOpsMatchTheReference(R"(
graph @g(%a: f32[17,9] @cpu, %b: f32[33,9] @cpu, %bias: f32[33] @cpu, %res: f32[17,33] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0", transpose_b = true} : f32[17,33] @cpu
  %q = add %p, %bias {kernel = "k0"} : f32[17,33] @cpu
  %s = add %res, %q {kernel = "k0"} : f32[17,33] @cpu
  %r = gelu %s {approximate = "tanh", kernel = "k0"} : f32[17,33] @cpu
  return %r
})");
}

// A matmul of [batch, rows, in] by one matrix (ONNX's MatMul of a linear layer) is one GEMM
// over the stacked rows, its bias, exact gelu and residual its post-ops; transposed b too.
TEST(CpuGemmEpilogueTest, RowStackedMatmulWithBiasExactGeluAndResidual) {
  expectPostOpsMatchTheReference(R"(
graph @g(%a: f32[3,7,24] @cpu, %b: f32[24,40] @cpu, %bias: f32[40] @cpu, %res: f32[3,7,40] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f32[3,7,40] @cpu
  %q = add %bias, %p {kernel = "k0"} : f32[3,7,40] @cpu
  %g = gelu %q {kernel = "k0"} : f32[3,7,40] @cpu
  %r = add %g, %res {kernel = "k0"} : f32[3,7,40] @cpu
  return %r
})");
  expectPostOpsMatchTheReference(R"(
graph @g(%a: f32[2,5,16] @cpu, %b: f32[12,16] @cpu, %bias: f32[12] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0", transpose_b = true} : f32[2,5,12] @cpu
  %q = add %p, %bias {kernel = "k0"} : f32[2,5,12] @cpu
  %r = gelu %q {approximate = "tanh", kernel = "k0"} : f32[2,5,12] @cpu
  return %r
})");
}

// Two residuals, each its own post-op operand, in order.
TEST(CpuGemmEpilogueTest, TwoResidualsInOrder) {
  expectPostOpsMatchTheReference(R"(
graph @g(%a: f32[8,16] @cpu, %b: f32[16,12] @cpu, %r1: f32[8,12] @cpu, %r2: f32[8,12] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f32[8,12] @cpu
  %s = add %p, %r1 {kernel = "k0"} : f32[8,12] @cpu
  %t = gelu %s {kernel = "k0"} : f32[8,12] @cpu
  %r = add %r2, %t {kernel = "k0"} : f32[8,12] @cpu
  return %r
})");
}

// Not f32, no product to apply them to, or a relu (oneDNN's makes NaN 0, torch.relu keeps it):
// the post-ops do not apply, and nothing is written.
TEST(CpuGemmEpilogueTest, LeavesOtherCasesToTheGeneratedEpilogue) {
  for (const char* text : {R"(
graph @g(%a: f32[8,16] @cpu, %b: f32[16,12] @cpu, %bias: f32[12] @cpu) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f32[8,12] @cpu
  %q = add %p, %bias {kernel = "k0"} : f32[8,12] @cpu
  %r = relu %q {kernel = "k0"} : f32[8,12] @cpu
  return %r
})",
                           R"(
graph @g(%x: f16[4,8] @cpu, %w: f16[6,8] @cpu, %res: f16[4,6] @cpu) -> (r) {
  %p = linear %x, %w {bias = false, in_features = 8, kernel = "k0", out_features = 6} : f16[4,6] @cpu
  %r = add %p, %res {kernel = "k0"} : f16[4,6] @cpu
  return %r
})",
                           R"(
graph @g(%x: f32[4,0] @cpu, %w: f32[6,0] @cpu) -> (r) {
  %p = linear %x, %w {bias = false, in_features = 0, kernel = "k0", out_features = 6} : f32[4,6] @cpu
  %r = relu %p {kernel = "k0"} : f32[4,6] @cpu
  return %r
})"}) {
    SCOPED_TRACE(text);
    EpilogueRun run = runFused(text);
    EXPECT_FALSE(run.took);
    for (int64_t i = 0; i < run.result.numel(); ++i) ASSERT_EQ(run.result.loadFloat(i), 7.0f);
  }
}

}  // namespace
}  // namespace gxc
