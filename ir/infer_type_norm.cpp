// Shape and dtype rules of the normalizations: layer_norm and rms_norm over the last dims
// (`normalized_shape`, default the last one), group_norm over groups of channels of x [N, C,
// ...], batch_norm per channel of x [N, C, ...], and dropout. Each keeps x's shape and dtype;
// their params (weight, bias; batch_norm's running mean and variance) are shaped as the
// normalized dims (the channels for group_norm and batch_norm).
#include <algorithm>

#include "ir/infer_type_rules.h"

namespace gxc::infer {
namespace {

// The params after x, named as the module names them.
void checkParams(const Op& op, const Shape& expected) {
  const TensorType& x = operandType(op, 0);
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const TensorType& p = operandType(op, i);
    requireSameDType(op, x, p);
    if (p.shape != expected)
      fail(op, "{} is {}, expected {}", i == 1 ? "weight" : "bias", p.withoutDevice(),
           shapeString(expected));
  }
}

Shape lastDimsNorm(const Op& op) {
  const TensorType& x = operandType(op, 0);
  if (x.rank() < 1) fail(op, "needs at least one dimension, got {}", x.withoutDevice());
  Shape normalized = normalizedShapeOf(op.attrs, x.shape);
  bool matches = !normalized.empty() && normalized.size() <= x.shape.size() &&
                 std::equal(normalized.begin(), normalized.end(),
                            x.shape.end() - static_cast<int64_t>(normalized.size()));
  if (!matches)
    fail(op, "normalized_shape {} is not the last dims of x {}", shapeString(normalized),
         x.withoutDevice());
  checkParams(op, normalized);
  return x.shape;
}

Shape groupNorm(const Op& op) {
  const TensorType& x = operandType(op, 0);
  int64_t groups = op.attrs.getInt("num_groups", 0);
  int64_t channels = op.attrs.getInt("num_channels", 0);
  if (groups <= 0 || channels <= 0)
    fail(op, "num_groups ({}) and num_channels ({}) must be positive", groups, channels);
  if (channels % groups != 0)
    fail(op, "num_groups {} does not divide num_channels {}", groups, channels);
  if (x.rank() < 2 || x.shape[1] != channels)
    fail(op, "x must be [N, {}, ...] (num_channels along dim 1), got {}", channels,
         x.withoutDevice());
  checkParams(op, {channels});
  return x.shape;
}

// nn.BatchNorm1d/2d (F.batch_norm): operands x, running_mean, running_var, then weight and
// bias when affine. momentum only matters in training, but is checked as PyTorch's users
// expect it (a fraction), so that a model that runs today still trains when training lands.
Shape batchNorm(const Op& op) {
  const TensorType& x = operandType(op, 0);
  int64_t features = op.attrs.getInt("num_features", 0);
  if (features <= 0) fail(op, "num_features must be positive, got {}", features);
  if (x.rank() < 2 || x.shape[1] != features)
    fail(op, "x must be [N, {}, ...] (num_features along dim 1), got {}", features,
         x.withoutDevice());
  double eps = op.attrs.getFloat("eps", 1e-5);
  if (!(eps > 0.0)) fail(op, "eps must be positive, got {}", eps);
  double momentum = op.attrs.getFloat("momentum", 0.1);
  if (!(momentum >= 0.0 && momentum <= 1.0))
    fail(op, "momentum must be in [0, 1], got {}", momentum);
  bool affine = op.attrs.getBool("affine", true);
  size_t expected = affine ? 5 : 3;
  if (op.operands.size() != expected)
    fail(op, "with affine = {} takes {} operands (x, running_mean, running_var{}), got {}", affine,
         expected, affine ? ", weight, bias" : "", op.operands.size());
  static const char* const kNames[] = {"x", "running_mean", "running_var", "weight", "bias"};
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const TensorType& p = operandType(op, i);
    requireSameDType(op, x, p);
    if (p.shape != Shape{features})
      fail(op, "{} is {}, expected [{}]", kNames[i], p.withoutDevice(), features);
  }
  return x.shape;
}

}  // namespace

Shape normShape(const Op& op) {
  const TensorType& x = operandType(op, 0);
  requireFloat(op, x);
  switch (op.kind) {
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      return lastDimsNorm(op);
    case OpKind::GroupNorm:
      return groupNorm(op);
    case OpKind::BatchNorm:
      return batchNorm(op);
    case OpKind::Dropout: {
      double p = op.attrs.getFloat("p", 0.5);
      if (!(p >= 0.0 && p <= 1.0)) fail(op, "p must be in [0, 1], got {}", p);
      if (op.operands.size() == 2) {  // train-mode's: the step count its masks are drawn for
        const TensorType& step = operandType(op, 1);
        if (step.rank() != 0 || step.dtype != DType::I64)
          fail(op, "its step count must be a 0-d i64, got {}", step.withoutDevice());
        if (!op.attrs.has("seed")) fail(op, "a dropout with a step count needs a `seed`");
      }
      return x.shape;
    }
    default:
      GXC_CHECK(false, "{} is not a normalization", opName(op.kind));
  }
  return {};
}

}  // namespace gxc::infer
