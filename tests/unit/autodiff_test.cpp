// The autodiff pass's gradient rules against central finite differences, in f64
// (finite_differences.h), and its refusals. The ops of the ONNX networks are in
// autodiff_network_ops_test.cpp.
#include "finite_differences.h"

#include <gtest/gtest.h>

#include "ir/diagnostic.h"
#include "passes/pass_manager.h"

namespace gxc {
namespace {

using autodiff_check::expectGradientsMatchFiniteDifferences;
using autodiff_check::trainingGraph;

TEST(AutodiffTest, LinearReluMse) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [5, 3], dtype: f64}\n  y: {shape: [5, 2], dtype: f64}\n"
      "layers:\n"
      "  - {name: fc1, op: linear, inputs: [x], in_features: 3, out_features: 4}\n"
      "  - {name: act, op: relu, inputs: [fc1]}\n"
      "  - {name: fc2, op: linear, inputs: [act], in_features: 4, out_features: 2}\n"
      "  - {name: loss, op: mse_loss, inputs: [fc2, y]}\n"
      "outputs: [fc2]\ntrain: {loss: loss}\n",
      4);
}

TEST(AutodiffTest, MatmulWithEveryTransposeAndBroadcastArithmetic) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [4, 4], dtype: f64}\n"
      "params:\n"
      "  a: {shape: [4, 3], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "  b: {shape: [5, 4], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "  row: {shape: [1, 5], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "  col: {shape: [3, 1], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "layers:\n"
      "  - {name: m1, op: matmul, inputs: [a, x], transpose_a: true}\n"   // [3,4]
      "  - {name: m2, op: matmul, inputs: [m1, b], transpose_b: true}\n"  // [3,5]
      "  - {name: m3, op: matmul, inputs: [b, m2], transpose_a: true, transpose_b: true}\n"
      "  - {name: t, op: transpose, inputs: [m3]}\n"  // [3,4]
      "  - {name: s1, op: add, inputs: [m2, row]}\n"
      "  - {name: s2, op: sub, inputs: [s1, col]}\n"
      "  - {name: s3, op: mul, inputs: [s2, row]}\n"
      "  - {name: e, op: exp, inputs: [col]}\n"
      "  - {name: s4, op: div, inputs: [s3, e]}\n"
      "  - {name: s5, op: mul, inputs: [s4], scalar: 0.5}\n"
      "  - {name: th, op: tanh, inputs: [s5]}\n"
      "  - {name: sg, op: sigmoid, inputs: [t]}\n"
      "  - {name: lg, op: log, inputs: [sg]}\n"
      "  - {name: sq, op: sqrt, inputs: [sg]}\n"
      "  - {name: n, op: neg, inputs: [sq]}\n"
      "  - {name: r, op: reshape, inputs: [n], shape: [4, 3]}\n"
      "  - {name: m4, op: matmul, inputs: [r, th]}\n"  // [4,5]
      "  - {name: mean1, op: mean, inputs: [m4], axis: 1}\n"
      "  - {name: sum1, op: sum, inputs: [lg]}\n"
      "  - {name: sum2, op: sum, inputs: [mean1]}\n"
      "  - {name: loss, op: add, inputs: [sum1, sum2]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      4);
}

TEST(AutodiffTest, SoftmaxLogSoftmaxAndWeightedCrossEntropyWithIgnoredRows) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [8, 3], dtype: f64}\n  labels: {shape: [8], dtype: i64}\n"
      "params:\n  class_weight: {shape: [4], dtype: f64, init: {uniform: {low: 0.5, high: 2}}}\n"
      "layers:\n"
      "  - {name: fc, op: linear, inputs: [x], in_features: 3, out_features: 4}\n"
      "  - {name: sm, op: softmax, inputs: [fc]}\n"
      "  - {name: ls, op: log_softmax, inputs: [sm], axis: 0}\n"
      "  - {name: ce, op: cross_entropy, inputs: [ls, labels], weight: class_weight, "
      "ignore_index: 1}\n"
      "  - {name: ce2, op: cross_entropy, inputs: [fc, labels], reduction: sum}\n"
      "  - {name: loss, op: add, inputs: [ce, ce2]}\n"
      "outputs: [loss]\ntrain: {loss: loss, frozen: [class_weight]}\n",
      2);
}

// concat and to: the ops data-parallel and pipeline-stages write around the model's layers
// (gathers, partial losses, hand-offs between devices).
TEST(AutodiffTest, ConcatAndTo) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [3, 2], dtype: f64}\n"
      "params:\n"
      "  a: {shape: [3, 2], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "  b: {shape: [2, 4], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "layers:\n"
      "  - {name: c, op: concat, inputs: [x, a], axis: 1}\n"   // [3,4]
      "  - {name: d, op: concat, inputs: [b, c], axis: -2}\n"  // [5,4]
      "  - {name: t, op: to, inputs: [d], device: cpu}\n"
      "  - {name: th, op: tanh, inputs: [t]}\n"
      "  - {name: loss, op: sum, inputs: [th]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      2);
}

// gelu in both forms; layer_norm with its weight and bias, and over two dims without them.
TEST(AutodiffTest, GeluAndLayerNorm) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [4, 3, 5], dtype: f64}\n  y: {shape: [4, 3, 6], dtype: f64}\n"
      "layers:\n"
      "  - {name: fc, op: linear, inputs: [x], in_features: 5, out_features: 6}\n"
      "  - {name: g1, op: gelu, inputs: [fc]}\n"
      "  - {name: g2, op: gelu, inputs: [fc], approximate: tanh}\n"
      "  - {name: s, op: add, inputs: [g1, g2]}\n"
      "  - {name: ln, op: layer_norm, inputs: [s]}\n"
      "  - {name: w, op: mul, inputs: [ln, fc]}\n"
      "  - {name: ln2, op: layer_norm, inputs: [w], normalized_shape: [3, 6], affine: false, "
      "eps: 0.01}\n"
      "  - {name: loss, op: mse_loss, inputs: [ln2, y]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      4);
}

// rms_norm over the last dim and over two, with and without a weight; group_norm of [N, C, L]
// with weight and bias, and without, in fewer groups.
TEST(AutodiffTest, RmsNormAndGroupNorm) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [4, 6, 5], dtype: f64}\n  y: {shape: [4, 6, 5], dtype: f64}\n"
      "layers:\n"
      "  - {name: fc, op: linear, inputs: [x], in_features: 5, out_features: 5}\n"
      "  - {name: gn, op: group_norm, inputs: [fc], num_groups: 3, num_channels: 6}\n"
      "  - {name: gn2, op: group_norm, inputs: [fc], num_groups: 2, num_channels: 6, "
      "affine: false, eps: 0.01}\n"
      "  - {name: rms, op: rms_norm, inputs: [fc], normalized_shape: [5]}\n"
      "  - {name: rms2, op: rms_norm, inputs: [gn], normalized_shape: [6, 5], "
      "elementwise_affine: false, eps: 0.1}\n"
      "  - {name: s, op: add, inputs: [rms2, gn2]}\n"
      "  - {name: t, op: mul, inputs: [s, rms]}\n"
      "  - {name: loss, op: mse_loss, inputs: [t, y]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      5);
}

// The pieces of a split, and attention: causal, with a scale, with a float or bool mask, and
// over heads (4-D, as the GPT decoder's).
TEST(AutodiffTest, SplitAndAttention) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [2, 4, 6], dtype: f64}\n  mask: {shape: [4, 4], dtype: f64}\n"
      "  y: {shape: [2, 4, 6], dtype: f64}\n"
      "layers:\n"
      "  - {name: qkv, op: linear, inputs: [x], in_features: 6, out_features: 18}\n"
      "  - {name: pieces, op: split, inputs: [qkv], split_size: 6, axis: -1, outputs: [q, k, "
      "v]}\n"
      "  - {name: a1, op: scaled_dot_product_attention, inputs: [q, k, v], is_causal: true}\n"
      "  - {name: a2, op: scaled_dot_product_attention, inputs: [q, k, v], scale: 0.3}\n"
      "  - {name: a3, op: scaled_dot_product_attention, inputs: [q, k, v, mask]}\n"
      "  - {name: qh, op: reshape, inputs: [q], shape: [2, 4, 2, 3]}\n"
      "  - {name: kh, op: reshape, inputs: [k], shape: [2, 4, 2, 3]}\n"
      "  - {name: vh, op: reshape, inputs: [v], shape: [2, 4, 2, 3]}\n"
      "  - {name: qt, op: transpose, inputs: [qh], perm: [0, 2, 1, 3]}\n"
      "  - {name: kt, op: transpose, inputs: [kh], perm: [0, 2, 1, 3]}\n"
      "  - {name: vt, op: transpose, inputs: [vh], perm: [0, 2, 1, 3]}\n"
      "  - {name: a4h, op: scaled_dot_product_attention, inputs: [qt, kt, vt], is_causal: "
      "true}\n"
      "  - {name: a4t, op: transpose, inputs: [a4h], perm: [0, 2, 1, 3]}\n"
      "  - {name: a4, op: reshape, inputs: [a4t], shape: [2, 4, 6]}\n"
      "  - {name: a5h, op: scaled_dot_product_attention, inputs: [qt, kt, vt, mask]}\n"
      "  - {name: a5t, op: transpose, inputs: [a5h], perm: [0, 2, 1, 3]}\n"
      "  - {name: a5, op: reshape, inputs: [a5t], shape: [2, 4, 6]}\n"
      "  - {name: keep, op: gt, inputs: [mask], scalar: -1.0}\n"
      "  - {name: a6, op: scaled_dot_product_attention, inputs: [q, k, v, keep]}\n"
      "  - {name: s1, op: add, inputs: [a1, a2]}\n"
      "  - {name: s2, op: add, inputs: [a3, a4]}\n"
      "  - {name: s3, op: add, inputs: [a5, a6]}\n"
      "  - {name: s4, op: add, inputs: [s1, s2]}\n"
      "  - {name: s, op: add, inputs: [s3, s4]}\n"
      "  - {name: loss, op: mse_loss, inputs: [s, y]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      2);
}

// conv2d with stride, padding, dilation, `same` and a non-square kernel (the rounding down of
// its output size included), and the average pools whose windows tile the input.
TEST(AutodiffTest, ConvolutionsAndAveragePools) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  x: {shape: [2, 2, 7, 6], dtype: f64}\n  y: {shape: [2, 2, 2, 1], dtype: f64}\n"
      "layers:\n"
      "  - {name: c1, op: conv2d, inputs: [x], in_channels: 2, out_channels: 3, kernel_size: 3, "
      "stride: 2, padding: 1}\n"  // [2,3,4,3]
      "  - {name: s1, op: sigmoid, inputs: [c1]}\n"
      "  - {name: c2, op: conv2d, inputs: [s1], in_channels: 3, out_channels: 2, kernel_size: "
      "2, dilation: [2, 1], padding: [1, 0], bias: false}\n"  // [2,2,4,2]
      "  - {name: c3, op: conv2d, inputs: [c2], in_channels: 2, out_channels: 2, kernel_size: "
      "3, padding: same}\n"
      "  - {name: p1, op: avg_pool2d, inputs: [c3], kernel_size: 2}\n"  // [2,2,2,1]
      "  - {name: p2, op: adaptive_avg_pool2d, inputs: [s1], output_size: [2, 1]}\n"
      "  - {name: p3, op: avg_pool2d, inputs: [x], kernel_size: [3, 4]}\n"  // [2,2,2,1]
      "  - {name: s2, op: add, inputs: [p1, p3]}\n"
      "  - {name: loss1, op: mse_loss, inputs: [s2, y]}\n"
      "  - {name: m, op: mean, inputs: [p2]}\n"
      "  - {name: loss, op: add, inputs: [loss1, m]}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      5);
}

// The table is f32 (embedding's params are), the rest f64 after a cast.
TEST(AutodiffTest, EmbeddingCastAndMseSum) {
  expectGradientsMatchFiniteDifferences(
      "inputs:\n  ids: {shape: [2, 3], dtype: i64}\n  y: {shape: [2, 3, 4], dtype: f64}\n"
      "params:\n  w: {shape: [4], dtype: f64, init: {normal: {std: 1.0}}}\n"
      "layers:\n"
      "  - {name: emb, op: embedding, inputs: [ids], num_embeddings: 5, embedding_dim: 4}\n"
      "  - {name: wide, op: cast, inputs: [emb], dtype: f64}\n"
      "  - {name: scaled, op: mul, inputs: [wide, w]}\n"
      "  - {name: loss, op: mse_loss, inputs: [scaled, y], reduction: sum}\n"
      "outputs: [loss]\ntrain: {loss: loss}\n",
      2);
}

TEST(AutodiffTest, RefusesAnOpWithoutARuleNamingTheLayer) {
  try {
    trainingGraph(
        "inputs:\n  x: {shape: [4, 3]}\nlayers:\n"
        "  - {name: fc, op: linear, inputs: [x], in_features: 3, out_features: 3}\n"
        "  - {name: c, op: cumsum, inputs: [fc], axis: 1}\n"
        "  - {name: loss, op: sum, inputs: [c]}\n"
        "outputs: [loss]\ntrain: {loss: loss}\n",
        "infer-shapes,autodiff");
    FAIL() << "cumsum has no rule";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("layer 'c': cannot train through cumsum"),
              std::string::npos)
        << error.what();
  }
}

// The layer rules refuse, each with its line, the uses they are not built for.
TEST(AutodiffTest, RefusesTheUsesTheLayerRulesAreNotBuiltFor) {
  auto refusal = [](const std::string& layers) {
    try {
      trainingGraph("inputs:\n  x: {shape: [2, 4, 6, 6]}\n  m: {shape: [6, 6]}\nlayers:\n" +
                        layers +
                        "  - {name: loss, op: sum, inputs: [last]}\n"
                        "outputs: [loss]\ntrain: {loss: loss}\n",
                    "infer-shapes,autodiff");
    } catch (const Error& error) {
      return formatError(error);
    }
    return std::string("trained");
  };
  const std::string conv =
      "  - {name: c, op: conv2d, inputs: [x], in_channels: 4, out_channels: 4, kernel_size: 3";
  EXPECT_EQ(refusal("  - {name: c, op: conv2d, inputs: [x], in_channels: 4, out_channels: 4, "
                    "kernel_size: 2, padding: same}\n  - {name: last, op: relu, inputs: [c]}\n"),
            "grads.yaml:8:5: error: layer 'c': cannot train through conv2d: the gradient with "
            "uneven padding (`same` with an even kernel) is not built yet");
  EXPECT_EQ(refusal(conv + "}\n  - {name: last, op: adaptive_avg_pool2d, inputs: [c], "
                           "output_size: 3}\n"),
            "grads.yaml:9:5: error: layer 'last': cannot train through adaptive_avg_pool2d: the "
            "gradient of overlapping adaptive windows (an output size that does not divide the "
            "input) is not built yet");
  EXPECT_EQ(refusal(conv + "}\n  - {name: last, op: slice, inputs: [c], axis: 3, start: 0, "
                           "end: 6, step: 2}\n"),
            "grads.yaml:9:5: error: layer 'last': cannot train through slice: the gradient of a "
            "slice with a step is not built yet");
  EXPECT_EQ(refusal("  - {name: w, op: linear, inputs: [m], in_features: 6, out_features: 6}\n"
                    "  - {name: last, op: scaled_dot_product_attention, inputs: [x, x, x, w]}\n"),
            "grads.yaml:9:5: error: layer 'last': cannot train through "
            "scaled_dot_product_attention: mask 'w' would be trained; freeze it (train: frozen)");
}

TEST(AutodiffTest, RefusesALossThatIsNotZeroDimensional) {
  try {
    trainingGraph(
        "inputs:\n  x: {shape: [4, 3]}\nlayers:\n"
        "  - {name: fc, op: linear, inputs: [x], in_features: 3, out_features: 3}\n"
        "outputs: [fc]\ntrain: {loss: fc}\n",
        "infer-shapes,autodiff");
    FAIL() << "a [4,3] loss";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("the loss must be a 0-d float"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace gxc
