// What PyTorch does with NaN, where a careless kernel would do otherwise: torch.minimum and
// torch.maximum give NaN if either operand is (C's fminf and fmaxf drop it), torch.clamp and
// torch.relu keep NaN (`x > 0 ? x : 0` makes it 0), torch.sign gives 0 for NaN and for both
// zeros. Written out here as well as in ops.json (op_cases_nonfinite*.py), so that the whole
// host path of one small graph, not only each op's kernel, is held on the reference interpreter
// and on the generated host kernels alike.
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "runtime/host/host_executor.h"
#include "runtime/reference/reference_executor.h"

namespace gxc {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

const char* kGraph = R"(
graph @nan(%a: f32[4] @cpu, %b: f32[4] @cpu) -> (lo, hi, lo_s, clamped, sign, rectified) {
  %lo = minimum %a, %b : f32[4] @cpu
  %hi = maximum %a, %b : f32[4] @cpu
  %lo_s = minimum %a {scalar = 0.5} : f32[4] @cpu
  %clamped = clamp %a {max = 1.0, min = -1.0} : f32[4] @cpu
  %sign = sign %a : f32[4] @cpu
  %rectified = relu %a : f32[4] @cpu
  return %lo, %hi, %lo_s, %clamped, %sign, %rectified
}
)";

Tensor values(std::initializer_list<float> list) {
  Tensor t(DType::F32, {static_cast<int64_t>(list.size())});
  int64_t i = 0;
  for (float v : list) t.storeFloat(i++, v);
  return t;
}

void expectSame(const Tensor& got, std::initializer_list<float> want, const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  int64_t i = 0;
  for (float w : want) {
    float g = got.loadFloat(i);
    if (std::isnan(w))
      EXPECT_TRUE(std::isnan(g)) << what << "[" << i << "] = " << g << ", not NaN";
    else
      EXPECT_EQ(g, w) << what << "[" << i << "]";
    ++i;
  }
}

void expectTorchsAnswers(const std::map<std::string, Tensor>& out, const std::string& platform) {
  // a = [NaN, 2, -0, 3], b = [1, NaN, 0.5, -4]
  expectSame(out.at("lo"), {kNaN, kNaN, -0.0f, -4.0f}, platform + " minimum");
  expectSame(out.at("hi"), {kNaN, kNaN, 0.5f, 3.0f}, platform + " maximum");
  expectSame(out.at("lo_s"), {kNaN, 0.5f, -0.0f, 0.5f}, platform + " minimum with a scalar");
  expectSame(out.at("clamped"), {kNaN, 1.0f, -0.0f, 1.0f}, platform + " clamp");
  expectSame(out.at("sign"), {0.0f, 1.0f, 0.0f, 1.0f}, platform + " sign");
  EXPECT_FALSE(std::signbit(out.at("sign").loadFloat(2))) << platform << ": sign(-0) is +0";
  expectSame(out.at("rectified"), {kNaN, 2.0f, -0.0f, 3.0f}, platform + " relu");
}

TEST(NanSemanticsTest, MinimumMaximumClampSignAndReluTreatNaNAsPyTorchDoes) {
  auto graph = parseGraph(kGraph, "nan.gxir");
  PassManager manager;
  manager.add("plan-memory");
  manager.run(*graph, PassContext{});
  std::map<std::string, Tensor> inputs = {{"a", values({kNaN, 2.0f, -0.0f, 3.0f})},
                                          {"b", values({1.0f, kNaN, 0.5f, -4.0f})}};
  expectTorchsAnswers(ReferenceExecutor(*graph).run(inputs), "reference");
  expectTorchsAnswers(HostExecutor(*graph).run(inputs), "cpu");
}

}  // namespace
}  // namespace gxc
