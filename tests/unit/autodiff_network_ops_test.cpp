// The gradient rules of the ops the ONNX networks (ResNet-18, MobileNetV2, GPT-2, BERT) and
// the CNNs people train use, against central finite differences in f64 (finite_differences.h):
// grouped and depthwise convolutions, conv_transpose2d, max and average pools of overlapping,
// padded windows, clamp, pad, batched matmuls, index_select and where.
#include "finite_differences.h"

#include <gtest/gtest.h>

#include "ir/diagnostic.h"
#include "passes/pass_manager.h"

namespace gxc {
namespace {

using autodiff_check::expectGradientsMatchFiniteDifferences;
using autodiff_check::trainingGraph;

// Grouped and depthwise convolutions; max_pool2d and avg_pool2d with overlapping windows,
// padding and ceil_mode (count_include_pad both ways); clamp with both bounds and with one.
TEST(AutodiffTest, GroupedConvolutionsOverlappingPoolsAndClamp) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [2, 4, 7, 6], dtype: f64}\n"
      "layers:\n"
      "  - {name: g1, op: conv2d, inputs: [x], in_channels: 4, out_channels: 6, kernel_size: 3, "
      "groups: 2, padding: 1}\n"  // [2,6,7,6]
      "  - {name: c1, op: clamp, inputs: [g1], min: -0.5, max: 0.6}\n"
      "  - {name: d1, op: conv2d, inputs: [c1], in_channels: 6, out_channels: 6, kernel_size: "
      "[3, 2], groups: 6, stride: 2, dilation: [1, 2], padding: 1}\n"  // [2,6,4,3]
      "  - {name: m1, op: max_pool2d, inputs: [g1], kernel_size: 3, stride: 2, padding: 1, "
      "ceil_mode: true}\n"  // [2,6,4,4]
      "  - {name: m2, op: max_pool2d, inputs: [c1], kernel_size: [2, 3], stride: 1}\n"
      "  - {name: a1, op: avg_pool2d, inputs: [d1], kernel_size: 3, stride: 2, padding: 1, "
      "ceil_mode: true, count_include_pad: false}\n"
      "  - {name: a2, op: avg_pool2d, inputs: [g1], kernel_size: 3, stride: 2, padding: 1}\n"
      "  - {name: c2, op: clamp, inputs: [m1], min: -0.3}\n"
      "  - {name: c3, op: clamp, inputs: [m2], max: 0.2}\n"
      "  - {name: s1, op: mul, inputs: [c2, c2]}\n"
      "  - {name: s2, op: mul, inputs: [c3, c3]}\n"
      "  - {name: s3, op: mul, inputs: [a1, a1]}\n"
      "  - {name: s4, op: mul, inputs: [a2, a2]}\n"
      "  - {name: l1, op: sum, inputs: [s1]}\n"
      "  - {name: l2, op: sum, inputs: [s2]}\n"
      "  - {name: l3, op: sum, inputs: [s3]}\n"
      "  - {name: l4, op: sum, inputs: [s4]}\n"
      "  - {name: l5, op: add, inputs: [l1, l2]}\n"
      "  - {name: l6, op: add, inputs: [l3, l4]}\n"
      "  - {name: loss, op: add, inputs: [l5, l6]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      4);
}

// The ops of ONNX-exported transformers: a 3-D by 2-D matmul (x W), a 4-D one (attention's
// scores), index_select of a table (a Gather embedding; an index picked twice) and along an
// activation's last axis, and where with a broadcast operand.
TEST(AutodiffTest, BatchedMatmulIndexSelectAndWhere) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [2, 3, 4], dtype: f64}\n  ids: {shape: [5], dtype: i64}\n"
      "  cols: {shape: [4], dtype: i64}\n  c: {shape: [2, 3, 5], dtype: bool}\n"
      "params:\n"
      "  w: {shape: [4, 5], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "  t: {shape: [6, 4], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "  bb: {shape: [1, 5], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "layers:\n"
      "  - {name: m1, op: matmul, inputs: [x, w]}\n"  // [2,3,5]
      "  - {name: m1r, op: reshape, inputs: [m1], shape: [1, 2, 3, 5]}\n"
      "  - {name: m2, op: matmul, inputs: [m1r, m1r], transpose_b: true}\n"  // [1,2,3,3]
      "  - {name: e, op: index_select, inputs: [t, ids], axis: 0}\n"         // [5,4]
      "  - {name: s, op: index_select, inputs: [m1, cols], axis: 2}\n"       // [2,3,4]
      "  - {name: wh, op: where, inputs: [c, m1, bb]}\n"
      "  - {name: q1, op: tanh, inputs: [m2]}\n"
      "  - {name: q2, op: mul, inputs: [e, e]}\n"
      "  - {name: q3, op: mul, inputs: [s, s]}\n"
      "  - {name: q4, op: mul, inputs: [wh, wh]}\n"
      "  - {name: l1, op: sum, inputs: [q1]}\n"
      "  - {name: l2, op: sum, inputs: [q2]}\n"
      "  - {name: l3, op: sum, inputs: [q3]}\n"
      "  - {name: l4, op: sum, inputs: [q4]}\n"
      "  - {name: l5, op: add, inputs: [l1, l2]}\n"
      "  - {name: l6, op: add, inputs: [l3, l4]}\n"
      "  - {name: loss, op: add, inputs: [l5, l6]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      3);
}

// conv_transpose2d with stride, padding, dilation and output_padding, grouped and not; pad
// that pads and crops.
TEST(AutodiffTest, ConvTransposeAndPad) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [2, 4, 4, 3], dtype: f64}\n"
      "layers:\n"
      "  - {name: t1, op: conv_transpose2d, inputs: [x], in_channels: 4, out_channels: 6, "
      "kernel_size: 3, stride: 2, padding: 1, output_padding: 1, groups: 2}\n"  // [2,6,8,6]
      "  - {name: s1, op: sigmoid, inputs: [t1]}\n"
      "  - {name: t2, op: conv_transpose2d, inputs: [s1], in_channels: 6, out_channels: 2, "
      "kernel_size: [2, 3], dilation: [2, 1], bias: false}\n"  // [2,2,10,8]
      "  - {name: p1, op: pad, inputs: [t2], pad: [1, -2, -3, 2]}\n"
      "  - {name: q1, op: mul, inputs: [p1, p1]}\n"
      "  - {name: loss, op: sum, inputs: [q1]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      3);
}

// What stays refused names the layer, the op and what is missing, on one line.
TEST(AutodiffTest, RefusesAReflectPad) {
  try {
    trainingGraph(
        "inputs:\n  x: {shape: [2, 3, 4]}\nlayers:\n"
        "  - {name: fc, op: linear, inputs: [x], in_features: 4, out_features: 4}\n"
        "  - {name: p, op: pad, inputs: [fc], pad: [1, 1], mode: reflect}\n"
        "  - {name: loss, op: sum, inputs: [p]}\n"
        "outputs: [loss]\ntrain: {loss: loss}\n",
        "infer-shapes,autodiff");
    FAIL() << "a reflect pad has no rule";
  } catch (const Error& error) {
    EXPECT_EQ(formatError(error),
              "grads.yaml:8:5: error: layer 'p': cannot train through pad: the gradient of mode "
              "'reflect' is not built yet (constant is)");
  }
}

}  // namespace
}  // namespace gxc
