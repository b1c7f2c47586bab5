// Gradient rules of rms_norm and group_norm. Both normalize x over some dims (rms_norm by the
// root mean square of its last dims, group_norm by the mean and biased variance of each
// sample's groups of channels), then scale (and shift) per element of the normalized shape or
// per channel. With x^ the normalized x, r the reciprocal of the divisor and g = dy weight:
//   dweight = sum(dy x^) and dbias = sum(dy) over the dims the weight broadcasts along;
//   dx = r (g - mean(g) - x^ mean(g x^))   (group_norm, which subtracts the mean),
//   dx = r (g - x^ mean(g x^))             (rms_norm, which does not),
// the means over the normalized dims.
#include "ir/infer_type.h"
#include "passes/autodiff_rules.h"

namespace gxc {
namespace {

Value* keptMean(GradBuilder& b, Value* x, const std::vector<int64_t>& axes) {
  Attrs attrs;
  attrs.set("axis", axes);
  attrs.set("keepdim", true);
  return b.op(OpKind::Mean, {x}, attrs);
}

// x^ and r over `axes` of x: centered by the mean when `centered`, divided by the root of the
// mean square plus eps.
struct Normalized {
  Value* x;           // x^
  Value* reciprocal;  // r, keepdim over `axes`
};

Normalized normalize(GradBuilder& b, Value* x, const std::vector<int64_t>& axes, bool centered,
                     double eps) {
  if (centered) x = b.op(OpKind::Sub, {x, keptMean(b, x, axes)});
  Value* meanSquare = keptMean(b, b.op(OpKind::Mul, {x, x}), axes);
  Value* reciprocal = b.op(OpKind::Rsqrt, {b.scalarOp(OpKind::Add, meanSquare, eps)});
  return {b.op(OpKind::Mul, {x, reciprocal}), reciprocal};
}

Value* inputGradient(GradBuilder& b, Value* g, const Normalized& n,
                     const std::vector<int64_t>& axes, bool centered) {
  Value* inner = b.op(OpKind::Mul, {n.x, keptMean(b, b.op(OpKind::Mul, {g, n.x}), axes)});
  Value* rest = b.op(OpKind::Sub, {g, inner});
  if (centered) rest = b.op(OpKind::Sub, {rest, keptMean(b, g, axes)});
  return b.op(OpKind::Mul, {rest, n.reciprocal});
}

// rms_norm(x[, weight]) over the last dims, the weight shaped as them.
std::vector<Value*> rmsNormGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  int64_t rank = x->type.rank();
  auto normalized = static_cast<int64_t>(normalizedShapeOf(op.attrs, x->type.shape).size());
  std::vector<int64_t> axes;
  for (int64_t axis = rank - normalized; axis < rank; ++axis) axes.push_back(axis);
  double eps = op.attrs.getFloat("eps", rmsNormDefaultEps(x->type.dtype));
  Normalized n = normalize(b, x, axes, false, eps);
  std::vector<Value*> grads(op.operands.size(), nullptr);
  bool affine = op.operands.size() > 1;
  if (affine && need[1])
    grads[1] = b.sumToShape(b.op(OpKind::Mul, {dy, n.x}), op.operands[1]->type.shape);
  if (need[0])
    grads[0] =
        inputGradient(b, affine ? b.op(OpKind::Mul, {dy, op.operands[1]}) : dy, n, axes, false);
  return grads;
}

// group_norm(x[, weight, bias]) of x [N, C, ...]: each sample's C / G channels of a group
// (and their spatial dims) as one normalized row of x viewed as [N, G, rest].
std::vector<Value*> groupNormGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  const Shape& shape = x->type.shape;
  int64_t groups = op.attrs.getInt("num_groups", 1);
  int64_t samples = shape.at(0);
  int64_t rest = x->type.numel() / std::max<int64_t>(1, samples * groups);
  Shape grouped{samples, groups, rest};
  std::vector<int64_t> axes{2};
  Normalized n = normalize(b, b.reshape(x, grouped), axes, true, op.attrs.getFloat("eps", 1e-5));
  Value* normalizedX = b.reshape(n.x, shape);
  Shape perChannel(shape.size(), 1);
  perChannel[1] = shape[1];
  std::vector<Value*> grads(op.operands.size(), nullptr);
  bool affine = op.operands.size() > 1;
  auto channelSum = [&](Value* v, size_t operand) {
    return b.reshape(b.sumToShape(v, perChannel), op.operands[operand]->type.shape);
  };
  if (affine && need[1]) grads[1] = channelSum(b.op(OpKind::Mul, {dy, normalizedX}), 1);
  if (op.operands.size() > 2 && need[2]) grads[2] = channelSum(dy, 2);
  if (!need[0]) return grads;
  Value* g = dy;
  if (affine) g = b.op(OpKind::Mul, {dy, b.reshape(op.operands[1], perChannel)});
  grads[0] = b.reshape(inputGradient(b, b.reshape(g, grouped), n, axes, true), shape);
  return grads;
}

}  // namespace

std::optional<std::vector<Value*>> normGradients(GradBuilder& builder, Value* dy,
                                                 const std::vector<bool>& needed) {
  switch (builder.forward().kind) {
    case OpKind::RmsNorm:
      return rmsNormGradients(builder, dy, needed);
    case OpKind::GroupNorm:
      return groupNormGradients(builder, dy, needed);
    default:
      return std::nullopt;
  }
}

}  // namespace gxc
