// Reference kernels of the elementwise losses, pred against a target of the same shape:
// mse_loss, l1_loss, smooth_l1_loss (F.*) and binary_cross_entropy_with_logits (with an
// optional pos_weight along the last dim), with reductions none, sum and mean (over every
// element). Computed and summed in double.
#include <algorithm>
#include <cmath>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// The loss of one element: pred x, target y, pos_weight p (1 without one).
double elementLoss(const Op& op, double x, double y, double p) {
  switch (op.kind) {
    case OpKind::MseLoss:
      return (x - y) * (x - y);
    case OpKind::L1Loss:
      return std::abs(x - y);
    case OpKind::SmoothL1Loss: {
      // F.smooth_l1_loss: quadratic below beta, linear above; beta 0 is l1_loss.
      double beta = op.attrs.getFloat("beta", 1.0), d = std::abs(x - y);
      return d < beta ? 0.5 * d * d / beta : d - 0.5 * beta;
    }
    case OpKind::BceWithLogits: {
      // PyTorch's stable form: (1 - y) x + (1 + (p - 1) y) (log(1 + exp(-|x|)) + max(-x, 0)).
      double logWeight = 1.0 + (p - 1.0) * y;
      return (1.0 - y) * x + logWeight * (std::log1p(std::exp(-std::abs(x))) + std::max(-x, 0.0));
    }
    default:
      GXC_CHECK(false, "{} is not an elementwise loss", opName(op.kind));
  }
  return 0;
}

}  // namespace

LossReduction lossReduction(const Op& op) {
  std::string name = op.attrs.getString("reduction", "mean");
  if (name == "none") return LossReduction::None;
  if (name == "sum") return LossReduction::Sum;
  GXC_CHECK(name == "mean", "layer '{}': reduction '{}'", op.layerName(), name);
  return LossReduction::Mean;
}

Tensor elementwiseLossOp(const Op& op, const Operands& operands) {
  bool posWeighted = op.kind == OpKind::BceWithLogits && operands.size() == 3;
  checkOperandCount(op, operands, 2, posWeighted ? 3 : 2);
  checkFloatOperands(op, operands,
                     posWeighted ? std::vector<size_t>{0, 1, 2} : std::vector<size_t>{0, 1});
  const Tensor& pred = *operands[0];
  const Tensor& target = *operands[1];
  GXC_CHECK(pred.shape() == target.shape(), "layer '{}': pred {} and target {}", op.layerName(),
            shapeString(pred.shape()), shapeString(target.shape()));
  int64_t classes = pred.rank() == 0 ? 1 : pred.shape().back();
  std::vector<double> losses;
  for (int64_t i = 0; i < pred.numel(); ++i) {
    double p = posWeighted ? operands[2]->loadDouble(i % classes) : 1.0;
    losses.push_back(elementLoss(op, pred.loadDouble(i), target.loadDouble(i), p));
  }
  LossReduction reduction = lossReduction(op);
  if (reduction == LossReduction::None) {
    Tensor result = makeResult(op, pred.shape());
    for (int64_t i = 0; i < result.numel(); ++i)
      storeComputed(result, i, losses[static_cast<size_t>(i)]);
    return result;
  }
  double total = 0.0;
  for (double loss : losses) total += loss;
  if (reduction == LossReduction::Mean) total /= static_cast<double>(losses.size());
  Tensor result = makeResult(op, {});
  storeComputed(result, 0, total);
  return result;
}

}  // namespace gxc::reference
