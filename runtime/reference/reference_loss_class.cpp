// Reference kernels of the class-index losses, F.nll_loss and F.cross_entropy: input [N, C]
// or [N, C, d1, ...] (log-probabilities, or logits that cross_entropy turns into them with
// log_softmax over C), target [N, d1, ...] of class indices, optional class weights, targets
// equal to `ignore_index` left out, cross_entropy's `label_smoothing`, reductions none, sum
// and mean. As PyTorch: the mean divides by the summed weights of the targets not ignored
// (NaN when every target is), and label smoothing mixes in the weighted mean over classes:
// (1 - e) * nll + e / C * smooth, where smooth is -sum_c w[c] log p[c], reduced the same way.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor classIndexLossOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 3);
  const Tensor& input = *operands[0];
  const Tensor& target = *operands[1];
  const Tensor* weight = operands.size() == 3 ? operands[2] : nullptr;
  checkFloatOperands(op, operands, weight ? std::vector<size_t>{0, 2} : std::vector<size_t>{0});
  GXC_CHECK(input.rank() >= 2, "layer '{}': {} input {}", op.layerName(), opName(op.kind),
            shapeString(input.shape()));
  int64_t n = input.shape()[0], classes = input.shape()[1];
  int64_t inner = input.numel() / (n * classes);  // positions d1 * d2 * ... per sample
  Shape perSample = input.shape();
  perSample.erase(perSample.begin() + 1);
  GXC_CHECK(isInteger(target.dtype()) && target.shape() == perSample,
            "layer '{}': {} target {}[{}] for input {}", op.layerName(), opName(op.kind),
            dtypeName(target.dtype()), shapeString(target.shape()), shapeString(input.shape()));
  int64_t ignoreIndex = op.attrs.getInt("ignore_index", -100);
  double smoothing = op.attrs.getFloat("label_smoothing", 0.0);
  bool logits = op.kind == OpKind::CrossEntropy;

  std::vector<double> nll, smooth;
  double weightSum = 0.0;  // of the targets not ignored
  std::vector<double> logProbs(static_cast<size_t>(classes));
  for (int64_t i = 0; i < target.numel(); ++i) {
    int64_t sample = i / inner, at = i % inner;
    int64_t t = target.loadInt(i);
    if (t == ignoreIndex) {
      nll.push_back(0.0);
      smooth.push_back(0.0);
      continue;
    }
    // Targets are data: a bad one is the user's error, found only when the op runs.
    if (t < 0 || t >= classes)
      runtimeError(op.loc, "layer '{}': {} target {} of sample {} is out of range [0, {})",
                   op.layerName(), opName(op.kind), t, i, classes);
    for (int64_t c = 0; c < classes; ++c)
      logProbs[c] = input.loadDouble((sample * classes + c) * inner + at);
    if (logits) {  // log_softmax, the max subtracted for stability
      double max = -std::numeric_limits<double>::infinity();
      for (double v : logProbs) max = std::max(max, v);
      double sum = 0.0;
      for (double v : logProbs) sum += std::exp(v - max);
      for (double& v : logProbs) v = v - max - std::log(sum);
    }
    double w = weight ? weight->loadDouble(t) : 1.0;
    nll.push_back(-w * logProbs[t]);
    double s = 0.0;
    for (int64_t c = 0; c < classes; ++c) s -= (weight ? weight->loadDouble(c) : 1.0) * logProbs[c];
    smooth.push_back(s);
    weightSum += w;
  }

  auto mixed = [&](double nllValue, double smoothValue) {
    if (smoothing == 0.0) return nllValue;
    return (1.0 - smoothing) * nllValue + smoothing / static_cast<double>(classes) * smoothValue;
  };
  LossReduction reduction = lossReduction(op);
  if (reduction == LossReduction::None) {
    Tensor result = makeResult(op, perSample);
    for (int64_t i = 0; i < result.numel(); ++i) storeComputed(result, i, mixed(nll[i], smooth[i]));
    return result;
  }
  if (op.attrs.getBool("weight_sum", false)) {  // the denominator of the mean instead
    Tensor result = makeResult(op, {});
    storeComputed(result, 0, weightSum);
    return result;
  }
  double nllTotal = 0.0, smoothTotal = 0.0;
  for (size_t i = 0; i < nll.size(); ++i) {
    nllTotal += nll[i];
    smoothTotal += smooth[i];
  }
  if (reduction == LossReduction::Mean) {
    nllTotal /= weightSum;  // 0 / 0 = NaN when every target is ignored, as in PyTorch
    smoothTotal /= weightSum;
  }
  Tensor result = makeResult(op, {});
  storeComputed(result, 0, mixed(nllTotal, smoothTotal));
  return result;
}

}  // namespace gxc::reference
