// The host's max pool through oneDNN (runtime/host/cpu_pool.h) against the reference
// interpreter: windows of every geometry the op takes (padding, strides, ceil_mode, rectangles,
// a [C, H, W] x), NaN and -inf where oneDNN's own max differs from torch's, in each layout pair
// the host runs (NCHW, channels-last in and out, channels-last in and NCHW out); and which
// pools go to the library.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "random_tensor.h"
#include "runtime/host/cpu_pool.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/reference/reference_ops.h"

namespace gxc {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// x [n, c, h, w] (or [c, h, w]), its bytes as NHWC and back.
struct Dims {
  int64_t n, c, h, w;
};

Dims dimsOf(const Shape& shape) {
  if (shape.size() == 3) return {1, shape[0], shape[1], shape[2]};
  return {shape[0], shape[1], shape[2], shape[3]};
}

// `from` with its NCHW bytes rewritten as NHWC (`toChannelsLast`), or back.
Tensor relaid(const Tensor& from, bool toChannelsLast) {
  Dims d = dimsOf(from.shape());
  Tensor out(DType::F32, from.shape());
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t c = 0; c < d.c; ++c)
      for (int64_t y = 0; y < d.h; ++y)
        for (int64_t x = 0; x < d.w; ++x) {
          const int64_t nchw = ((n * d.c + c) * d.h + y) * d.w + x;
          const int64_t nhwc = ((n * d.h + y) * d.w + x) * d.c + c;
          if (toChannelsLast)
            out.storeFloat(nhwc, from.loadFloat(nchw));
          else
            out.storeFloat(nchw, from.loadFloat(nhwc));
        }
  return out;
}

// The one pool of `text` on a random x with `special` values written at their indices (NCHW),
// by the library in `layouts` and by the reference: the same values, NaN where NaN.
void expectPoolAsTheReference(const std::string& text,
                              const std::vector<std::pair<int64_t, float>>& special = {}) {
  auto graph = parseGraph(text, "pool.gxir");
  const Op& op = *graph->ops().front();
  ASSERT_TRUE(cpuMaxPoolApplies(op));
  Tensor x = randomTensor(DType::F32, op.operands[0]->type.shape, 7);
  for (auto [at, value] : special) x.storeFloat(at, value);
  Tensor expected = evaluateReferenceOp(op, {&x});
  Tensor channelsLastX = relaid(x, true);
  for (PoolLayouts layouts :
       {PoolLayouts{false, false}, PoolLayouts{true, true}, PoolLayouts{true, false}}) {
    SCOPED_TRACE(testing::Message() << "channels-last x " << layouts.inputChannelsLast
                                    << ", result " << layouts.resultChannelsLast);
    Tensor result(DType::F32, op.result->type.shape);
    cpuMaxPool(op, layouts.inputChannelsLast ? channelsLastX.view() : x.view(), result.view(),
               layouts);
    if (layouts.resultChannelsLast) result = relaid(result, false);
    ASSERT_EQ(result.numel(), expected.numel());
    for (int64_t i = 0; i < expected.numel(); ++i) {
      float got = result.loadFloat(i), want = expected.loadFloat(i);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << "element " << i << ": " << got << ", not NaN";
      else
        EXPECT_EQ(got, want) << "element " << i;
    }
  }
}

TEST(CpuMaxPoolTest, ResNetStemWindows) {
  expectPoolAsTheReference(R"(
graph @g(%x: f32[2,16,9,9] @cpu) -> (y) {
  %y = max_pool2d %x {kernel_size = 3, padding = 1, stride = 2} : f32[2,16,5,5] @cpu
  return %y
})");
}

TEST(CpuMaxPoolTest, CeilModeRectanglesAndThreeDims) {
  expectPoolAsTheReference(R"(
graph @g(%x: f32[2,5,7,6] @cpu) -> (y) {
  %y = max_pool2d %x {ceil_mode = true, kernel_size = 2} : f32[2,5,4,3] @cpu
  return %y
})");
  expectPoolAsTheReference(R"(
graph @g(%x: f32[1,3,8,7] @cpu) -> (y) {
  %y = max_pool2d %x {ceil_mode = true, kernel_size = [3, 2], padding = [1, 0], stride = [2, 3]} : f32[1,3,5,3] @cpu
  return %y
})");
  expectPoolAsTheReference(R"(
graph @g(%x: f32[4,5,5] @cpu) -> (y) {
  %y = max_pool2d %x {kernel_size = 2} : f32[4,2,2] @cpu
  return %y
})");
}

// oneDNN's max skips a NaN and starts from the lowest finite float; torch's is NaN for a
// window holding one and -inf for a window of -inf only. Channel 0 of x [1, 2, 6, 6]: a NaN at
// (1, 1); channel 1: -inf over rows 0-1 and a +inf at (5, 5).
TEST(CpuMaxPoolTest, NaNAndInfinitiesAsTorch) {
  std::vector<std::pair<int64_t, float>> special{{7, kNaN}, {36 + 35, kInf}};
  for (int64_t i = 36; i < 36 + 12; ++i) special.push_back({i, -kInf});
  expectPoolAsTheReference(R"(
graph @g(%x: f32[1,2,6,6] @cpu) -> (y) {
  %y = max_pool2d %x {kernel_size = 2} : f32[1,2,3,3] @cpu
  return %y
})",
                           special);
  expectPoolAsTheReference(R"(
graph @g(%x: f32[1,2,6,6] @cpu) -> (y) {
  %y = max_pool2d %x {kernel_size = 3, padding = 1, stride = 2} : f32[1,2,3,3] @cpu
  return %y
})",
                           special);
}

// Every pool runs oneDNN's code generated for the machine, never one of its loops in C++ (on an
// AVX2 machine oneDNN has only its `simple_nchw` loop for an NCHW pool, some 20 times slower:
// GoogLeNet's inception pools, a third of its time), whatever the layouts.
TEST(CpuMaxPoolTest, NoPoolRunsOneDnnsLoopsInCpp) {
  const std::string text = R"(
graph @g(%x: f32[1,192,28,28] @cpu) -> (y) {
  %y = max_pool2d %x {ceil_mode = true, kernel_size = 3, padding = 1, stride = 1} : f32[1,192,28,28] @cpu
  return %y
})";
  auto graph = parseGraph(text, "pool.gxir");
  const Op& op = *graph->ops().front();
  for (PoolLayouts layouts :
       {PoolLayouts{false, false}, PoolLayouts{true, true}, PoolLayouts{true, false}}) {
    const std::string implementation = cpuMaxPoolImplementation(op, layouts);
    EXPECT_EQ(implementation.rfind("simple", 0), std::string::npos) << implementation;
    EXPECT_EQ(implementation.rfind("ref", 0), std::string::npos) << implementation;
  }
  expectPoolAsTheReference(text);
}

TEST(CpuMaxPoolTest, WhatStaysWithTheGeneratedKernel) {
  auto graph = parseGraph(R"(
graph @g(%x: f32[1,2,4,4] @cpu, %h: f16[1,2,4,4] @cpu, %d: f64[1,2,4,4] @cpu) -> (a, b, c, e) {
  %a = max_pool2d %x {kernel_size = 2} : f32[1,2,2,2] @cpu
  %b = max_pool2d %h {kernel_size = 2} : f16[1,2,2,2] @cpu
  %c = max_pool2d %d {kernel_size = 2} : f64[1,2,2,2] @cpu
  %e = avg_pool2d %x {kernel_size = 2} : f32[1,2,2,2] @cpu
  return %a, %b, %c, %e
})",
                          "pool.gxir");
  std::vector<bool> library;
  for (const Op* op : graph->ops()) library.push_back(hostLibraryCallFor(*op) != nullptr);
  EXPECT_EQ(library, (std::vector<bool>{true, false, false, false}));
}

}  // namespace
}  // namespace gxc
