// Reference kernels of the losses: mse_loss (F.mse_loss) and cross_entropy
// (F.cross_entropy on [N, C] logits with class-index targets and optional class weights).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

enum class Reduction { None, Sum, Mean };

Reduction reductionOf(const Op& op) {
  std::string name = op.attrs.getString("reduction", "mean");
  if (name == "none") return Reduction::None;
  if (name == "sum") return Reduction::Sum;
  GXC_CHECK(name == "mean", "layer '{}': reduction '{}'", op.layerName(), name);
  return Reduction::Mean;
}

}  // namespace

Tensor mseLossOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 2);
  checkFloatOperands(op, operands, {0, 1});
  const Tensor& pred = *operands[0];
  const Tensor& target = *operands[1];
  // F.mse_loss broadcasts pred against target (PyTorch warns, but computes it).
  Shape shape = broadcastShapes(op, pred.shape(), target.shape());
  std::vector<double> squares;
  for (int64_t i = 0; i < checkedNumel(shape).value(); ++i) {
    Coords coords = unravelIndex(i, shape);
    double diff = static_cast<double>(pred.loadFloat(broadcastIndex(coords, pred.shape()))) -
                  target.loadFloat(broadcastIndex(coords, target.shape()));
    squares.push_back(diff * diff);
  }
  Reduction reduction = reductionOf(op);
  if (reduction == Reduction::None) {
    Tensor result = makeResult(op, shape);
    for (int64_t i = 0; i < result.numel(); ++i)
      result.storeFloat(i, static_cast<float>(squares[static_cast<size_t>(i)]));
    return result;
  }
  double total = 0.0;
  for (double square : squares) total += square;
  if (reduction == Reduction::Mean) total /= static_cast<double>(squares.size());
  Tensor result = makeResult(op, {});
  result.storeFloat(0, static_cast<float>(total));
  return result;
}

Tensor crossEntropyOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 3);
  const Tensor& logits = *operands[0];
  const Tensor& target = *operands[1];
  const Tensor* weight = operands.size() == 3 ? operands[2] : nullptr;
  checkFloatOperands(op, operands, weight ? std::vector<size_t>{0, 2} : std::vector<size_t>{0});
  GXC_CHECK(logits.rank() == 2, "layer '{}': cross_entropy logits {}", op.layerName(),
            shapeString(logits.shape()));
  int64_t n = logits.shape()[0];
  int64_t classes = logits.shape()[1];
  GXC_CHECK(isInteger(target.dtype()) && target.shape() == Shape{n},
            "layer '{}': cross_entropy target {}[{}] for logits {}", op.layerName(),
            dtypeName(target.dtype()), shapeString(target.shape()), shapeString(logits.shape()));
  GXC_CHECK(!weight || weight->shape() == Shape{classes},
            "layer '{}': cross_entropy weight {} for {} classes", op.layerName(),
            shapeString(weight->shape()), classes);

  // Per sample: w[t] * -log_softmax(logits)[t], with log_softmax's max subtracted for
  // stability; weightSum is the denominator of the weighted mean.
  std::vector<double> losses;
  double weightSum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t t = target.loadInt(i);
    // Targets are data: a bad one is the user's error, found only when the op runs.
    if (t < 0 || t >= classes)
      runtimeError(op.loc,
                   "layer '{}': cross_entropy target {} of sample {} is out of range [0, {})",
                   op.layerName(), t, i, classes);
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c)
      max = std::max(max, static_cast<double>(logits.loadFloat(i * classes + c)));
    double sum = 0.0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(logits.loadFloat(i * classes + c) - max);
    double nll = -(logits.loadFloat(i * classes + t) - max - std::log(sum));
    double w = weight ? weight->loadFloat(t) : 1.0;
    losses.push_back(w * nll);
    weightSum += w;
  }

  Reduction reduction = reductionOf(op);
  if (reduction == Reduction::None) {
    Tensor result = makeResult(op, {n});
    for (int64_t i = 0; i < n; ++i) result.storeFloat(i, static_cast<float>(losses[i]));
    return result;
  }
  double total = 0.0;
  for (double loss : losses) total += loss;
  // PyTorch's weighted mean divides by the summed weights of the targets, not by N.
  if (reduction == Reduction::Mean) total /= weightSum;
  Tensor result = makeResult(op, {});
  result.storeFloat(0, static_cast<float>(total));
  return result;
}

}  // namespace gxc::reference
