// Shape and dtype rules of the losses: the elementwise ones (mse_loss, l1_loss, smooth_l1_loss,
// binary_cross_entropy_with_logits: pred and target of one shape) and the class-index ones
// (nll_loss, cross_entropy: input [N, C, d1, ...], target [N, d1, ...] of class indices).
// Every loss gives [] with reduction mean or sum, the per-element shape with none.
#include "ir/infer_type_rules.h"

namespace gxc::infer {
namespace {

Shape reduced(const Op& op, const Shape& perElement) {
  std::string reduction = op.attrs.getString("reduction", "mean");
  if (reduction == "none") return perElement;
  if (reduction == "mean" || reduction == "sum") return {};
  fail(op, "reduction must be mean, sum or none, got '{}'", reduction);
}

Shape elementwiseLoss(const Op& op) {
  const TensorType& pred = operandType(op, 0);
  const TensorType& target = operandType(op, 1);
  requireFloat(op, pred);
  requireSameDType(op, pred, target);
  if (pred.shape != target.shape)
    fail(op, "pred {} and target {} differ in shape", pred.withoutDevice(), target.withoutDevice());
  if (op.kind == OpKind::SmoothL1Loss && !(op.attrs.getFloat("beta", 1.0) >= 0))
    fail(op, "beta must not be negative, got {}", op.attrs.getFloat("beta", 1.0));
  if (op.kind == OpKind::BceWithLogits && op.operands.size() == 3) {
    // pos_weight: one weight per class, the classes along the last dim (broadcast over the rest).
    const TensorType& posWeight = operandType(op, 2);
    requireSameDType(op, pred, posWeight);
    if (pred.rank() == 0 || posWeight.shape != Shape{pred.shape.back()})
      fail(op, "pos_weight is {}, expected [{}] (one per class of the last dim of {})",
           posWeight.withoutDevice(), pred.rank() == 0 ? 1 : pred.shape.back(),
           pred.withoutDevice());
  }
  return reduced(op, pred.shape);
}

Shape classIndexLoss(const Op& op) {
  const TensorType& input = operandType(op, 0);
  const TensorType& target = operandType(op, 1);
  const char* what = op.kind == OpKind::NllLoss ? "log-probs" : "logits";
  requireFloat(op, input);
  if (input.rank() < 2)
    fail(op, "{} must be [N, C] or [N, C, d1, ...], got {}", what, input.withoutDevice());
  Shape perSample = input.shape;
  perSample.erase(perSample.begin() + 1);  // the class dim
  if (!isInteger(target.dtype) || target.shape != perSample)
    fail(op, "target must be i64{} class indices for {} {}, got {}", shapeString(perSample), what,
         input.withoutDevice(), target.withoutDevice());
  if (op.operands.size() == 3) {
    const TensorType& weight = operandType(op, 2);
    requireSameDType(op, input, weight);
    if (weight.shape != Shape{input.shape[1]})
      fail(op, "weight is {}, expected {} (one per class)", weight.withoutDevice(),
           shapeString({input.shape[1]}));
  }
  double smoothing = op.attrs.getFloat("label_smoothing", 0.0);
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    fail(op, "label_smoothing must be in [0, 1], got {}", smoothing);
  if (op.attrs.getBool("weight_sum", false) && op.attrs.getString("reduction", "mean") != "sum")
    fail(op, "weight_sum needs reduction sum");
  return reduced(op, perSample);
}

}  // namespace

Shape lossShape(const Op& op) {
  switch (op.kind) {
    case OpKind::MseLoss:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
    case OpKind::BceWithLogits:
      return elementwiseLoss(op);
    case OpKind::NllLoss:
    case OpKind::CrossEntropy:
      return classIndexLoss(op);
    default:
      GXC_CHECK(false, "{} is not a loss", opName(op.kind));
  }
  return {};
}

}  // namespace gxc::infer
