// Reference kernels of rms_norm (nn.RMSNorm: x / sqrt(mean(x^2) + eps) * weight over the last
// dims, eps by default the dtype's machine epsilon) and group_norm (nn.GroupNorm: x [N, C, ...]
// normalized per sample over each group of C / G channels, biased variance, then a weight and
// bias per channel) and batch_norm at inference (nn.BatchNorm in eval(): each channel of x
// [N, C, ...] normalized by its running mean and variance, then its weight and bias). Computed
// in double. And dropout: the identity, or in training (a step count as its second operand)
// x times a mask drawn from the seed, the step and each element's index, over 1 - p.
#include <cmath>
#include <cstring>

#include "ir/diagnostic.h"
#include "ir/infer_type.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor rmsNormOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 2);
  checkFloatOperands(op, operands,
                     operands.size() == 2 ? std::vector<size_t>{0, 1} : std::vector<size_t>{0});
  const Tensor& x = *operands[0];
  Shape normalized = normalizedShapeOf(op.attrs, x.shape());
  int64_t dim = checkedNumel(normalized).value();
  const Tensor* weight = operands.size() == 2 ? operands[1] : nullptr;
  GXC_CHECK(!weight || weight->shape() == normalized, "layer '{}': rms_norm weight {} for {}",
            op.layerName(), shapeString(weight->shape()), shapeString(normalized));
  double eps = op.attrs.getFloat("eps", rmsNormDefaultEps(x.dtype()));
  Tensor result = makeResult(op, x.shape());
  for (int64_t r = 0; r < x.numel() / dim; ++r) {
    double squares = 0.0;
    for (int64_t k = 0; k < dim; ++k) {
      double v = x.loadDouble(r * dim + k);
      squares += v * v;
    }
    double invRms = 1.0 / std::sqrt(squares / static_cast<double>(dim) + eps);
    for (int64_t k = 0; k < dim; ++k) {
      double value = x.loadDouble(r * dim + k) * invRms;
      if (weight) value *= weight->loadDouble(k);
      storeComputed(result, r * dim + k, value);
    }
  }
  return result;
}

Tensor groupNormOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 3);
  std::vector<size_t> floats;
  for (size_t i = 0; i < operands.size(); ++i) floats.push_back(i);
  checkFloatOperands(op, operands, floats);
  const Tensor& x = *operands[0];
  int64_t groups = op.attrs.getInt("num_groups", 0), channels = op.attrs.getInt("num_channels", 0);
  GXC_CHECK(x.rank() >= 2 && x.shape()[1] == channels && groups > 0 && channels % groups == 0,
            "layer '{}': group_norm of {} in {} groups of {} channels", op.layerName(),
            shapeString(x.shape()), groups, channels);
  const Tensor* weight = operands.size() >= 2 ? operands[1] : nullptr;
  const Tensor* bias = operands.size() >= 3 ? operands[2] : nullptr;
  double eps = op.attrs.getFloat("eps", 1e-5);
  int64_t spatial = x.numel() / (x.shape()[0] * channels);
  int64_t groupSize = channels / groups * spatial;  // contiguous: the group's channels in a row
  Tensor result = makeResult(op, x.shape());
  for (int64_t base = 0; base < x.numel(); base += groupSize) {
    double sum = 0.0;
    for (int64_t k = 0; k < groupSize; ++k) sum += x.loadDouble(base + k);
    double mean = sum / static_cast<double>(groupSize);
    double squares = 0.0;
    for (int64_t k = 0; k < groupSize; ++k) {
      double centered = x.loadDouble(base + k) - mean;
      squares += centered * centered;
    }
    double invStd = 1.0 / std::sqrt(squares / static_cast<double>(groupSize) + eps);
    for (int64_t k = 0; k < groupSize; ++k) {
      int64_t channel = (base + k) / spatial % channels;
      double value = (x.loadDouble(base + k) - mean) * invStd;
      if (weight) value *= weight->loadDouble(channel);
      if (bias) value += bias->loadDouble(channel);
      storeComputed(result, base + k, value);
    }
  }
  return result;
}

Tensor batchNormOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 3, 5);
  std::vector<size_t> floats;
  for (size_t i = 0; i < operands.size(); ++i) floats.push_back(i);
  checkFloatOperands(op, operands, floats);
  const Tensor& x = *operands[0];
  int64_t channels = op.attrs.getInt("num_features", 0);
  GXC_CHECK(x.rank() >= 2 && x.shape()[1] == channels && operands.size() != 4,
            "layer '{}': batch_norm of {} with {} features and {} operands", op.layerName(),
            shapeString(x.shape()), channels, operands.size());
  for (size_t i = 1; i < operands.size(); ++i)
    GXC_CHECK(operands[i]->shape() == Shape{channels}, "layer '{}': batch_norm param {} is {}",
              op.layerName(), i, shapeString(operands[i]->shape()));
  const Tensor &mean = *operands[1], &variance = *operands[2];
  const Tensor* weight = operands.size() == 5 ? operands[3] : nullptr;
  const Tensor* bias = operands.size() == 5 ? operands[4] : nullptr;
  double eps = op.attrs.getFloat("eps", 1e-5);
  int64_t spatial = x.numel() == 0 ? 1 : x.numel() / (x.shape()[0] * channels);
  Tensor result = makeResult(op, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t channel = i / spatial % channels;
    double centered = x.loadDouble(i) - mean.loadDouble(channel);
    double value = centered / std::sqrt(variance.loadDouble(channel) + eps);
    if (weight) value = value * weight->loadDouble(channel) + bias->loadDouble(channel);
    storeComputed(result, i, value);
  }
  return result;
}

namespace {

// The mask's rule, as the model format defines it (docs/model-format.md, "dropout in
// training"), written here again rather than shared with the kernel header: splitmix64's
// output number index + 1 from a key mixed from the seed and the step; kept when its top 24
// bits are at least p * 2^24.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

bool keeps(uint64_t seed, uint64_t step, uint64_t index, uint64_t threshold) {
  constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;
  uint64_t key = mix64(seed ^ mix64(step ^ kGamma));
  return (mix64(key + (index + 1) * kGamma) >> 40) >= threshold;
}

}  // namespace

Tensor dropoutOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 2);
  const Tensor& x = *operands[0];
  Tensor result = makeResult(op, x.shape());
  if (operands.size() == 1) {  // inference, as nn.Dropout in eval mode
    std::memcpy(result.data(), x.data(), x.nbytes());
    return result;
  }
  double p = op.attrs.getFloat("p", 0.5);
  auto threshold = static_cast<uint64_t>(std::llround(p * 16777216.0));
  auto seed = static_cast<uint64_t>(op.attrs.getInt("seed", 0));
  auto step = static_cast<uint64_t>(operands[1]->loadInt(0));
  auto offset = static_cast<uint64_t>(op.attrs.getInt("mask_offset", 0));
  double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    bool kept = keeps(seed, step, offset + static_cast<uint64_t>(i), threshold);
    storeComputed(result, i, kept ? x.loadDouble(i) * scale : 0.0);
  }
  return result;
}

}  // namespace gxc::reference
