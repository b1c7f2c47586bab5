// Reference kernel of the reductions sum, mean and max over some axes (all when absent),
// with or without keeping the reduced dims. Sums accumulate in double.
#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor reduceOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  checkFloatOperands(op, operands, {0});
  const Tensor& x = *operands[0];
  bool keepdim = op.attrs.getBool("keepdim", false);

  // Which input dims are reduced: every dim when no axis is given. An empty list reduces
  // none, as NumPy reads it (and as shape inference does), not all as torch's `dim=[]`.
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
  std::optional<std::vector<int64_t>> axes = op.attrs.getAxes("axis");
  if (!axes) {
    reduced.assign(reduced.size(), true);
  } else {
    for (int64_t axis : *axes) {
      int64_t d = normalizeAxis(op, axis, x.rank());
      GXC_CHECK(!reduced[d], "layer '{}': axis {} reduced twice", op.layerName(), d);
      reduced[d] = true;
    }
  }

  // The result keeps the other dims in order, and the reduced ones as 1 with keepdim.
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!reduced[d])
      shape.push_back(x.shape()[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  Tensor result = makeResult(op, shape);

  std::vector<double> sums(static_cast<size_t>(result.numel()), 0.0);
  std::vector<float> maxima(static_cast<size_t>(result.numel()),
                            -std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < x.numel(); ++i) {
    Coords coords = unravelIndex(i, x.shape());
    Coords outCoords;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (!reduced[d])
        outCoords.push_back(coords[d]);
      else if (keepdim)
        outCoords.push_back(0);
    }
    size_t out = static_cast<size_t>(ravelIndex(outCoords, shape));
    float value = x.loadFloat(i);
    sums[out] += value;
    // NaN wins, as torch.max propagates it.
    if (value > maxima[out] || std::isnan(value)) maxima[out] = value;
  }

  int64_t count = x.numel() / result.numel();  // elements folded into each result element
  for (int64_t o = 0; o < result.numel(); ++o) {
    size_t i = static_cast<size_t>(o);
    switch (op.kind) {
      case OpKind::Sum:
        result.storeFloat(o, static_cast<float>(sums[i]));
        break;
      case OpKind::Mean:
        result.storeFloat(o, static_cast<float>(sums[i] / count));
        break;
      case OpKind::Max:
        result.storeFloat(o, maxima[i]);
        break;
      default:
        GXC_CHECK(false, "{} is not a reduction", opName(op.kind));
    }
  }
  return result;
}

}  // namespace gxc::reference
