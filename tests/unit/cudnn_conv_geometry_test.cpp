// How the cuda platform poses convolutions to cuDNN (runtime/cuda/cudnn_conv_geometry.h), on
// the conv2d and conv_transpose2d cases of tests/fixtures/ops.json, the ones the GPU tests run:
// dims, strides, paddings, dilations and groups by hand for a few, the transposed case as a
// backward-data convolution, the cases cuDNN does not take, and for every case the agreement
// with ir/conv_geometry.h. Needs no GPU and no cuDNN: it runs in every build.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "ir/conv_geometry.h"
#include "runtime/cuda/cudnn_conv_geometry.h"
#include "tests/unit/op_fixture_graph.h"

namespace gxc {
namespace {

using Dims = std::array<int64_t, 4>;
using Pair = std::array<int64_t, 2>;

const fixtures::OpFixtureGraph& fixtureGraph() {
  static const fixtures::OpFixtureGraph graph = fixtures::buildOpFixtureGraph({Device::cpu()});
  return graph;
}

CudnnConvGeometry geometryOf(const std::string& name) {
  const auto& ops = fixtureGraph().opOf;
  auto found = ops.find(name);
  if (found == ops.end()) ADD_FAILURE() << "no fixture case " << name;
  return found == ops.end() ? CudnnConvGeometry{} : cudnnConvGeometry(*found->second);
}

TEST(CudnnConvGeometry, GroupedConvolutionIsCudnnsForwardConvolution) {
  CudnnConvGeometry c = geometryOf("conv2d_groups");  // x [2,4,5,5], 6 out, 3x3, groups 2, pad 1
  EXPECT_FALSE(c.backwardData);
  EXPECT_TRUE(c.viaCudnn()) << c.generatedBecause.value_or("");
  EXPECT_EQ(c.x, (Dims{2, 4, 5, 5}));
  EXPECT_EQ(c.w, (Dims{6, 2, 3, 3}));  // in / groups: how cuDNN's graph API sees the groups
  EXPECT_EQ(c.y, (Dims{2, 6, 5, 5}));
  EXPECT_EQ(c.xStrides, (Dims{100, 25, 5, 1}));
  EXPECT_EQ(c.wStrides, (Dims{18, 9, 3, 1}));
  EXPECT_EQ(c.yStrides, (Dims{150, 25, 5, 1}));
  EXPECT_EQ(c.padding, (Pair{1, 1}));
  EXPECT_EQ(c.strides, (Pair{1, 1}));
  EXPECT_EQ(c.dilations, (Pair{1, 1}));
  EXPECT_EQ(c.groups, 2);
  EXPECT_TRUE(c.bias);
  EXPECT_EQ(c.dtype, DType::F32);
}

TEST(CudnnConvGeometry, StridesPaddingsAndDilationsPerSpatialDim) {
  // x [1,2,6,9], 3 out, kernel [2,4], stride [1,2], padding [1,0].
  CudnnConvGeometry c = geometryOf("conv2d_rectangular");
  EXPECT_TRUE(c.viaCudnn());
  EXPECT_EQ(c.w, (Dims{3, 2, 2, 4}));
  EXPECT_EQ(c.y, (Dims{1, 3, 7, 3}));
  EXPECT_EQ(c.padding, (Pair{1, 0}));
  EXPECT_EQ(c.strides, (Pair{1, 2}));
  CudnnConvGeometry dilated = geometryOf("conv2d_dilation");  // [1,2,9,9], 3x3, dilation 2, pad 2
  EXPECT_EQ(dilated.dilations, (Pair{2, 2}));
  EXPECT_EQ(dilated.y, (Dims{1, 2, 9, 9}));
  EXPECT_FALSE(geometryOf("conv2d_no_bias").bias);
  EXPECT_EQ(geometryOf("conv2d_bf16").dtype, DType::BF16);
  EXPECT_TRUE(geometryOf("conv2d_same_odd").viaCudnn());  // 3x3 `same`: 1 on every side
}

TEST(CudnnConvGeometry, TransposedConvolutionIsCudnnsBackwardData) {
  // x [2,3,4,4] -> [2,2,8,8]: 3x3, stride 2, padding 1, output_padding 1. cuDNN's forward
  // convolution runs from the result (its x) to the input (its y), with the weight as stored.
  CudnnConvGeometry c = geometryOf("conv_transpose2d_upsample");
  EXPECT_TRUE(c.backwardData);
  EXPECT_TRUE(c.viaCudnn()) << c.generatedBecause.value_or("");
  EXPECT_EQ(c.x, (Dims{2, 2, 8, 8}));
  EXPECT_EQ(c.w, (Dims{3, 2, 3, 3}));
  EXPECT_EQ(c.y, (Dims{2, 3, 4, 4}));
  EXPECT_EQ(c.padding, (Pair{1, 1}));
  EXPECT_EQ(c.strides, (Pair{2, 2}));

  CudnnConvGeometry grouped = geometryOf("conv_transpose2d_groups");  // [2,4,3,3] -> 6, groups 2
  EXPECT_EQ(grouped.x, (Dims{2, 6, 7, 7}));
  EXPECT_EQ(grouped.w, (Dims{4, 3, 3, 3}));
  EXPECT_EQ(grouped.y, (Dims{2, 4, 3, 3}));
  EXPECT_EQ(grouped.groups, 2);

  // output_padding [2,1] below stride [3,2]: the extra rows are positions of cuDNN's dx.
  CudnnConvGeometry padded = geometryOf("conv_transpose2d_output_padding");
  EXPECT_TRUE(padded.viaCudnn()) << padded.generatedBecause.value_or("");
  EXPECT_EQ(padded.x, (Dims{1, 2, 10, 9}));
  EXPECT_EQ(padded.y, (Dims{1, 2, 3, 4}));
}

TEST(CudnnConvGeometry, WhatCudnnDoesNotTakeIsLeftToTheGeneratedKernelWithTheReason) {
  // `same` with an even kernel [2,4] and dilation [1,2]: one more row and column after.
  CudnnConvGeometry same = geometryOf("conv2d_same_even");
  ASSERT_FALSE(same.viaCudnn());
  EXPECT_NE(same.generatedBecause->find("asymmetric"), std::string::npos) << *same.generatedBecause;
  // stride 1, dilation 2, output_padding 1: allowed (below the dilation), but no backward data.
  CudnnConvGeometry transposed = geometryOf("conv_transpose2d_dilation");
  ASSERT_FALSE(transposed.viaCudnn());
  EXPECT_NE(transposed.generatedBecause->find("output_padding"), std::string::npos)
      << *transposed.generatedBecause;
}

// Every convolution case: the descriptors say what ir/conv_geometry.h computes.
TEST(CudnnConvGeometry, EveryFixtureConvolutionAgreesWithTheConvGeometry) {
  int cases = 0;
  for (const auto& [name, op] : fixtureGraph().opOf) {
    if (op->kind != OpKind::Conv2d && op->kind != OpKind::ConvTranspose2d) continue;
    ++cases;
    SCOPED_TRACE(name);
    bool transposed = op->kind == OpKind::ConvTranspose2d;
    ConvGeometry g = transposed ? convTranspose2dGeometry(*op) : conv2dGeometry(*op);
    CudnnConvGeometry c = cudnnConvGeometry(*op);
    EXPECT_EQ(c.backwardData, transposed);
    const Dims& input = transposed ? c.y : c.x;
    const Dims& output = transposed ? c.x : c.y;
    EXPECT_EQ(input, (Dims{g.batch, g.inChannels, g.inH, g.inW}));
    EXPECT_EQ(output, (Dims{g.batch, g.outChannels, g.outH, g.outW}));
    EXPECT_EQ(Shape(input.begin(), input.end()), op->operands[0]->type.shape);
    EXPECT_EQ(Shape(output.begin(), output.end()), op->result->type.shape);
    EXPECT_EQ(Shape(c.w.begin(), c.w.end()), op->operands[1]->type.shape);  // as stored
    EXPECT_EQ(c.x[1] / c.w[1], g.groups);
    EXPECT_EQ(c.groups, g.groups);
    EXPECT_EQ(c.strides, (Pair{g.strideH, g.strideW}));
    EXPECT_EQ(c.dilations, (Pair{g.dilationH, g.dilationW}));
    EXPECT_EQ(c.bias, g.bias);
    EXPECT_EQ(c.dtype, op->result->type.dtype);
    bool symmetric = g.padTop == g.padBottom && g.padLeft == g.padRight;
    bool sizesAgree = !transposed || (g.outputPadH < g.strideH && g.outputPadW < g.strideW);
    // f64 runs the generated kernel, which computes in double.
    bool cudnnDType = c.dtype != DType::F64;
    EXPECT_EQ(c.viaCudnn(), symmetric && sizesAgree && cudnnDType);
    if (!c.viaCudnn()) continue;
    EXPECT_EQ(c.padding, (Pair{g.padTop, g.padLeft}));
    for (size_t d = 0; d < 2; ++d)  // cuDNN's forward output size: PyTorch's formula over x
      EXPECT_EQ(
          (c.x[2 + d] + 2 * c.padding[d] - c.dilations[d] * (c.w[2 + d] - 1) - 1) / c.strides[d] +
              1,
          c.y[2 + d]);
  }
  EXPECT_GE(cases, 20) << "the conv fixture cases went missing";
}

TEST(CudnnConvGeometry, PackedStridesAreRowMajor) {
  EXPECT_EQ(packedStrides({2, 3, 4, 5}), (Dims{60, 20, 5, 1}));
  EXPECT_EQ(packedStrides({1, 1, 1, 1}), (Dims{1, 1, 1, 1}));
}

}  // namespace
}  // namespace gxc
