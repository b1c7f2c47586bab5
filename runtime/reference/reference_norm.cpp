// Reference kernels of the normalizations: softmax and log_softmax along an axis, and
// layer_norm over the last dims (normalized_shape). Statistics are taken in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "ir/infer_type.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor softmaxOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  checkFloatOperands(op, operands, {0});
  const Tensor& x = *operands[0];
  Tensor result = makeResult(op, x.shape());
  int64_t axis = normalizeAxis(op, op.attrs.getInt("axis", -1), x.rank());
  // The tensor as [outer, n, inner]: each (outer, inner) pair is one vector along the axis.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  int64_t n = x.shape()[axis];
  bool logForm = op.kind == OpKind::LogSoftmax;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      auto index = [&](int64_t j) { return (o * n + j) * inner + in; };
      // Subtracting the max keeps exp from overflowing; the result is mathematically the same.
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < n; ++j) max = std::max(max, x.loadDouble(index(j)));
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(x.loadDouble(index(j)) - max);
      for (int64_t j = 0; j < n; ++j) {
        double shifted = x.loadDouble(index(j)) - max;
        double value = logForm ? shifted - std::log(sum) : std::exp(shifted) / sum;
        storeComputed(result, index(j), value);
      }
    }
  }
  return result;
}

Tensor layerNormOp(const Op& op, const Operands& operands) {
  // Operands: x, then the optional weight and bias (nn.LayerNorm with affine, or with
  // bias=False when only the weight is given).
  checkOperandCount(op, operands, 1, 3);
  std::vector<size_t> floats;
  for (size_t i = 0; i < operands.size(); ++i) floats.push_back(i);
  checkFloatOperands(op, operands, floats);
  const Tensor& x = *operands[0];
  GXC_CHECK(x.rank() >= 1, "layer '{}': layer_norm of a scalar", op.layerName());
  // Over the last dims (normalized_shape): rows of `dim` contiguous elements.
  Shape normalized = normalizedShapeOf(op.attrs, x.shape());
  int64_t dim = checkedNumel(normalized).value();
  const Tensor* weight = operands.size() >= 2 ? operands[1] : nullptr;
  const Tensor* bias = operands.size() >= 3 ? operands[2] : nullptr;
  for (const Tensor* param : {weight, bias})
    GXC_CHECK(!param || param->shape() == normalized, "layer '{}': layer_norm param {} for {}",
              op.layerName(), shapeString(param->shape()), shapeString(normalized));
  double eps = op.attrs.getFloat("eps", 1e-5);
  Tensor result = makeResult(op, x.shape());
  int64_t rows = x.numel() / dim;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t k = 0; k < dim; ++k) sum += x.loadDouble(r * dim + k);
    double mean = sum / static_cast<double>(dim);
    // Biased variance (divide by dim, not dim - 1), as PyTorch normalizes.
    double squares = 0.0;
    for (int64_t k = 0; k < dim; ++k) {
      double centered = x.loadDouble(r * dim + k) - mean;
      squares += centered * centered;
    }
    double invStd = 1.0 / std::sqrt(squares / static_cast<double>(dim) + eps);
    for (int64_t k = 0; k < dim; ++k) {
      double value = (x.loadDouble(r * dim + k) - mean) * invStd;
      if (weight) value *= weight->loadDouble(k);
      if (bias) value += bias->loadDouble(k);
      storeComputed(result, r * dim + k, value);
    }
  }
  return result;
}

}  // namespace gxc::reference
