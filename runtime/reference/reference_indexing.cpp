// Reference kernels of the format 1.1 ops that index, pad, tile or accumulate: gather,
// index_select, one_hot, pad, repeat, cumsum. Elements move bit for bit; cumsum adds floats in
// double (f16 and bf16 rounded once, at each result) and integers as i64.
#include <algorithm>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// An index read from the data: out of range is the user's error, found when the op runs
// (PyTorch's "index out of bounds"); negative ones too, as torch.gather refuses them.
int64_t checkedIndex(const Op& op, const Tensor& index, int64_t i, int64_t bound) {
  int64_t at = index.loadInt(i);
  if (at < 0 || at >= bound)
    runtimeError(op.loc, "layer '{}': {} index {} is out of range [0, {})", op.layerName(),
                 opName(op.kind), at, bound);
  return at;
}

}  // namespace

Tensor gatherOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 2);
  const Tensor& x = *operands[0];
  const Tensor& index = *operands[1];
  int64_t axis = normalizeAxis(op, op.attrs.getInt("axis", 0), x.rank());
  Tensor result = makeResult(op, index.shape());
  // result[c] = x[c with c[axis] replaced by index[c]].
  for (int64_t i = 0; i < index.numel(); ++i) {
    Coords coords = unravelIndex(i, index.shape());
    coords[axis] = checkedIndex(op, index, i, x.shape()[axis]);
    copyElement(x, ravelIndex(coords, x.shape()), result, i);
  }
  return result;
}

Tensor indexSelectOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 2);
  const Tensor& x = *operands[0];
  const Tensor& index = *operands[1];
  int64_t axis = normalizeAxis(op, op.attrs.getInt("axis", 0), x.rank());
  Shape shape = x.shape();
  shape[axis] = index.numel();
  Tensor result = makeResult(op, shape);
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords coords = unravelIndex(i, shape);
    coords[axis] = checkedIndex(op, index, coords[axis], x.shape()[axis]);
    copyElement(x, ravelIndex(coords, x.shape()), result, i);
  }
  return result;
}

Tensor oneHotOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  int64_t classes = op.attrs.getInt("num_classes", 0);
  Shape shape = x.shape();
  shape.push_back(classes);
  Tensor result = makeResult(op, shape);  // zeros, and a 1 per index
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t at = x.loadInt(i);
    if (at < 0 || at >= classes)
      runtimeError(op.loc, "layer '{}': one_hot index {} is out of range [0, {})", op.layerName(),
                   at, classes);
    result.storeInt(i * classes + at, 1);
  }
  return result;
}

Tensor padOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  const std::vector<int64_t> pads = *op.attrs.getIntList("pad");
  std::string mode = op.attrs.getString("mode", "constant");
  std::vector<int64_t> before(x.rank(), 0);
  Shape shape = x.shape();
  for (size_t p = 0; p < pads.size() / 2; ++p) {
    size_t d = x.shape().size() - 1 - p;
    before[d] = pads[2 * p];
    shape[d] += pads[2 * p] + pads[2 * p + 1];
  }
  Tensor result = makeResult(op, shape);
  // In x's dtype as torch's fill: f64 exactly, bool true where nonzero (0.5 too).
  Tensor fill(x.dtype(), {});
  fill.storeDouble(0, op.attrs.getFloat("value", 0.0));
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords coords = unravelIndex(i, shape);
    bool inside = true;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t size = x.shape()[d], at = coords[d] - before[d];
      if (mode == "reflect")  // mirrored about the edge element, which is not repeated
        at = at < 0 ? -at : at >= size ? 2 * (size - 1) - at : at;
      else if (mode == "replicate")
        at = std::clamp<int64_t>(at, 0, size - 1);
      inside = inside && at >= 0 && at < size;
      coords[d] = at;
    }
    if (inside)
      copyElement(x, ravelIndex(coords, x.shape()), result, i);
    else
      copyElement(fill, 0, result, i);
  }
  return result;
}

Tensor repeatOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  const std::vector<int64_t> repeats = *op.attrs.getIntList("repeats");
  size_t lead = repeats.size() - x.shape().size();
  Shape shape;
  for (size_t d = 0; d < repeats.size(); ++d)
    shape.push_back(repeats[d] * (d < lead ? 1 : x.shape()[d - lead]));
  Tensor result = makeResult(op, shape);
  // Tiles of x: result coordinate c reads x at c modulo x's size, in x's dims.
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords coords = unravelIndex(i, shape);
    Coords at(coords.begin() + static_cast<std::ptrdiff_t>(lead), coords.end());
    for (size_t d = 0; d < at.size(); ++d) at[d] %= x.shape()[d];
    copyElement(x, ravelIndex(at, x.shape()), result, i);
  }
  return result;
}

Tensor cumsumOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  int64_t axis = normalizeAxis(op, op.attrs.getInt("axis", 0), x.rank());
  Tensor result = makeResult(op, x.shape());
  int64_t size = x.shape()[axis], inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  // One running sum per line along the axis: lines start at outer * size * inner + inner index.
  for (int64_t line = 0; line < x.numel() / size; ++line) {
    int64_t start = (line / inner) * size * inner + line % inner;
    double sum = 0;
    int64_t integerSum = 0;
    for (int64_t k = 0; k < size; ++k) {
      int64_t i = start + k * inner;
      if (isFloat(x.dtype())) {
        sum += x.loadDouble(i);
        storeComputed(result, i, sum);
      } else {
        integerSum += x.loadInt(i);
        result.storeInt(i, integerSum);
      }
    }
  }
  return result;
}

}  // namespace gxc::reference
