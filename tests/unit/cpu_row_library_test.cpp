// The host's row ops through oneDNN (runtime/host/cpu_softmax.h, cpu_layer_norm.h) on the
// values the op fixtures do not hold: rows of -inf, an inf, a NaN, a constant row (no
// variance), each against the reference interpreter, NaN where it is NaN; and which ops go to
// the library at all (hostLibraryCallFor).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "random_tensor.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/reference/reference_ops.h"

namespace gxc {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The graph's one op on `inputs` (the rest random), by the library and by the reference.
struct Outputs {
  Tensor library, reference;
};

Outputs runBoth(const std::string& text, const std::vector<float>& firstInput) {
  auto graph = parseGraph(text, "rows.gxir");
  const Op& op = *graph->ops().front();
  std::vector<Tensor> operands;
  unsigned seed = 1;
  for (const Value* operand : op.operands)
    operands.push_back(randomTensor(operand->type.dtype, operand->type.shape, seed++));
  for (size_t i = 0; i < firstInput.size(); ++i) operands[0].storeFloat(i, firstInput[i]);
  std::vector<const Tensor*> pointers;
  std::vector<ConstTensorView> views;
  for (const Tensor& operand : operands) {
    pointers.push_back(&operand);
    views.push_back(operand.view());
  }
  HostLibraryCall call = hostLibraryCallFor(op);
  EXPECT_NE(call, nullptr);
  Outputs out;
  out.reference = evaluateReferenceOp(op, pointers);
  out.library = Tensor(op.result->type.dtype, op.result->type.shape);
  if (call) call(op, views, out.library.view());
  return out;
}

void expectSame(const Outputs& out) {
  ASSERT_EQ(out.library.numel(), out.reference.numel());
  for (int64_t i = 0; i < out.library.numel(); ++i) {
    float got = out.library.loadFloat(i), want = out.reference.loadFloat(i);
    if (std::isnan(want) || std::isinf(want)) {
      if (std::isinf(want)) {
        EXPECT_EQ(got, want) << "element " << i;
        continue;
      }
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": " << got << ", not NaN";
    } else {
      EXPECT_NEAR(got, want, 1e-5 * std::max(1.0f, std::abs(want))) << "element " << i;
    }
  }
}

// Rows of four: all -inf; -inf and finite; one inf; a NaN; large values.
const std::vector<float> kSpecialRows = {-kInf, -kInf, -kInf,  -kInf,  //
                                         -kInf, 1.0f,  2.0f,   -kInf,  //
                                         0.5f,  kInf,  1.0f,   2.0f,   //
                                         1.0f,  kNaN,  3.0f,   4.0f,   //
                                         1e30f, 1e30f, -1e30f, 0.0f};

TEST(CpuSoftmaxTest, SpecialValuesAsTheReference) {
  expectSame(runBoth(R"(
graph @g(%x: f32[5,4] @cpu) -> (y) {
  %y = softmax %x {axis = -1} : f32[5,4] @cpu
  return %y
})",
                     kSpecialRows));
}

TEST(CpuSoftmaxTest, LogSoftmaxSpecialValuesAsTheReference) {
  expectSame(runBoth(R"(
graph @g(%x: f32[5,4] @cpu) -> (y) {
  %y = log_softmax %x {axis = 1} : f32[5,4] @cpu
  return %y
})",
                     kSpecialRows));
}

// An axis that only dims of 1 follow is a last axis.
TEST(CpuSoftmaxTest, AxisBeforeUnitDims) {
  expectSame(runBoth(R"(
graph @g(%x: f32[3,7,1,1] @cpu) -> (y) {
  %y = softmax %x {axis = 1} : f32[3,7,1,1] @cpu
  return %y
})",
                     {}));
}

TEST(CpuLayerNormTest, ConstantRowAndSpecialValuesAsTheReference) {
  expectSame(runBoth(R"(
graph @g(%x: f32[5,4] @cpu, %w: f32[4] @cpu, %b: f32[4] @cpu) -> (y) {
  %y = layer_norm %x, %w, %b : f32[5,4] @cpu
  return %y
})",
                     {2.0f, 2.0f, 2.0f, 2.0f,  //
                      1.0f, kNaN, 3.0f, 4.0f,  //
                      0.5f, kInf, 1.0f, 2.0f,  //
                      1e3f, -1e3f, 1e3f, -1e3f}));
}

// The generated kernel keeps what the library does not take: other dtypes, an inner softmax
// axis (oneDNN 2.6 has only its reference implementation there), empty tensors, and a small
// attention.
TEST(CpuRowLibraryTest, WhatStaysWithTheGeneratedKernel) {
  auto graph = parseGraph(R"(
graph @g(%x: f32[4,8,16] @cpu, %h: f16[4,8] @cpu, %z: f32[0,8] @cpu, %q: f32[1,2,4] @cpu) -> (a, b, c, d, e, f, g) {
  %a = softmax %x {axis = 1} : f32[4,8,16] @cpu
  %b = softmax %x {axis = 2} : f32[4,8,16] @cpu
  %c = log_softmax %h {axis = -1} : f16[4,8] @cpu
  %d = layer_norm %h : f16[4,8] @cpu
  %e = layer_norm %z : f32[0,8] @cpu
  %f = layer_norm %x {normalized_shape = [8, 16]} : f32[4,8,16] @cpu
  %g = scaled_dot_product_attention %q, %q, %q : f32[1,2,4] @cpu
  return %a, %b, %c, %d, %e, %f, %g
})",
                          "rows.gxir");
  std::vector<bool> library;
  for (const Op* op : graph->ops()) library.push_back(hostLibraryCallFor(*op) != nullptr);
  EXPECT_EQ(library, (std::vector<bool>{false, true, false, false, false, true, false}));
}

}  // namespace
}  // namespace gxc
