// max_pool2d's gradient where torch's own rule decides it, against what torch 1.13 gives for the
// same x and dy (written out below): a tie goes to the window's first maximal element in
// row-major order, NaN to the window's last NaN, a window of -inf to its first element, and
// overlapping windows add up. The reference interpreter (ATen's scatter) and the generated
// kernel the host and the sim platform run (a gather per input element) must both give it,
// bit for bit: each element of dx is a sum of small integers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Ties of 1, 2 and 3, two NaNs down one column, and a corner of -inf.
const std::vector<float> kX = {1, 1,    2, 2,     0,     1, kNaN, 2, -1,    0,
                               3, kNaN, 3, -kInf, -kInf, 0, 3,    3, -kInf, -kInf};

// loss = sum(max_pool2d(x + p) * g) with p zeros: grad.p is the pool's dx for dy = g.
std::unique_ptr<Graph> poolGraph(const std::string& pool, const Target& target) {
  std::string yaml =
      "gxc: 1\nname: ties\nseed: 0\n"
      "inputs:\n  x: {shape: [1, 1, 4, 5]}\n  g: {shape: [1, 1, 3, 3]}\n"
      "params:\n  p: {shape: [1, 1, 4, 5], init: zeros}\n"
      "layers:\n"
      "  - {name: s, op: add, inputs: [x, p]}\n"
      "  - {name: m, op: max_pool2d, inputs: [s], " +
      pool +
      "}\n"
      "  - {name: w, op: mul, inputs: [m, g]}\n"
      "  - {name: loss, op: sum, inputs: [w]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n";
  auto graph = loadModelFromString(yaml, "ties.yaml", GXC_SOURCE_DIR);
  std::vector<std::string> passes = defaultPipeline();
  passes.insert(std::find(passes.begin(), passes.end(), "assign-devices"), "autodiff");
  PassContext context;
  context.target = target;
  PassManager(passes).run(*graph, context);
  return graph;
}

std::map<std::string, Tensor> poolInputs() {
  Tensor x(DType::F32, {1, 1, 4, 5}), g(DType::F32, {1, 1, 3, 3});
  for (int64_t i = 0; i < x.numel(); ++i) x.storeFloat(i, kX[i]);
  for (int64_t i = 0; i < g.numel(); ++i) g.storeFloat(i, static_cast<float>(i + 1));
  return {{"x", x}, {"g", g}};
}

void expectDx(const std::map<std::string, Tensor>& outputs, const std::vector<float>& expected,
              const std::string& where) {
  const Tensor& dx = outputs.at("grad.p");
  ASSERT_EQ(dx.numel(), static_cast<int64_t>(expected.size())) << where;
  for (int64_t i = 0; i < dx.numel(); ++i)
    EXPECT_EQ(dx.loadFloat(i), expected[i]) << where << ": element " << i;
}

void expectTorchsDx(const std::string& pool, const std::vector<float>& expected) {
  SCOPED_TRACE(pool);
  auto host = poolGraph(pool, Target::of({Device::cpu()}));
  expectDx(ReferenceExecutor(*host).run(poolInputs()), expected, "reference");
  expectDx(HostExecutor(*host).run(poolInputs()), expected, "host");
  auto sim = poolGraph(pool, Target::of({Device::cuda(0)}));
  expectDx(SimExecutor(*sim, SimConfig{}).run(poolInputs()), expected, "sim");
}

// torch: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True).backward(g). Window (1, 0)
// holds both NaNs (rows 1 and 2 of column 1): the second (element 11) takes its 4; window
// (2, 2) is all -inf: its first element (18) takes the 9.
TEST(PoolGradientTest, MaxPoolTiesNaNAndInfinityAsTorchWithPaddingAndCeilMode) {
  expectTorchsDx("kernel_size: 3, stride: 2, padding: 1, ceil_mode: true",
                 {0, 0, 0, 3, 0, 0, 3, 0, 0, 6, 0, 9, 0, 0, 0, 0, 15, 0, 9, 0});
}

// torch: F.max_pool2d(x, (2, 3), stride=1).backward(g): nine overlapping windows, four of
// them giving element 11 (the last NaN) their dy.
TEST(PoolGradientTest, MaxPoolOverlappingWindowsAddUpAsTorch) {
  expectTorchsDx("kernel_size: [2, 3], stride: 1",
                 {0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0, 24, 15, 0, 0, 0, 0, 0, 0, 0});
}

}  // namespace
}  // namespace gxc
