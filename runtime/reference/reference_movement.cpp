// Reference kernels of the data movement ops: reshape (and the views squeeze, unsqueeze and
// flatten), transpose, slice, concat, to, embedding.
// They copy elements bit for bit, never through float, so i64 and f16 survive unchanged.
#include <cstdint>
#include <cstring>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

void checkSameDtype(const Op& op, const Tensor& operand) {
  GXC_CHECK(operand.dtype() == op.result->type.dtype, "layer '{}': {} of {} into {}",
            op.layerName(), opName(op.kind), dtypeName(operand.dtype()),
            dtypeName(op.result->type.dtype));
}

}  // namespace

Tensor reshapeOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  checkSameDtype(op, x);
  // The `shape` attribute (with its -1), and the dims squeeze, unsqueeze and flatten drop,
  // add or merge, were resolved by shape inference; row-major data is the same for every
  // shape with as many elements.
  const Shape& shape = op.result->type.shape;
  GXC_CHECK(checkedNumel(shape) == x.numel(), "layer '{}': reshape of {} to {}", op.layerName(),
            shapeString(x.shape()), shapeString(shape));
  Tensor result = makeResult(op, shape);
  std::memcpy(result.data(), x.data(), x.nbytes());
  return result;
}

Tensor transposeOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  checkSameDtype(op, x);
  std::vector<int64_t> perm;
  if (auto given = op.attrs.getIntList("perm")) {
    GXC_CHECK(static_cast<int64_t>(given->size()) == x.rank(), "layer '{}': perm of {} for rank {}",
              op.layerName(), given->size(), x.rank());
    for (int64_t p : *given) perm.push_back(normalizeAxis(op, p, x.rank()));
  } else {
    for (int64_t d = x.rank() - 1; d >= 0; --d) perm.push_back(d);
  }
  std::vector<bool> used(perm.size(), false);
  for (int64_t p : perm) {
    GXC_CHECK(!used[p], "layer '{}': perm names dim {} twice", op.layerName(), p);
    used[p] = true;
  }
  // Result dim d is input dim perm[d].
  Shape shape;
  for (int64_t p : perm) shape.push_back(x.shape()[p]);
  Tensor result = makeResult(op, shape);
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords outCoords = unravelIndex(i, shape);
    Coords inCoords(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) inCoords[perm[d]] = outCoords[d];
    copyElement(x, ravelIndex(inCoords, x.shape()), result, i);
  }
  return result;
}

Tensor sliceOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  int64_t axis = normalizeAxis(op, op.attrs.getInt("axis", 0), x.rank());
  int64_t start = op.attrs.getInt("start", 0), end = op.attrs.getInt("end", 0);
  int64_t step = op.attrs.getInt("step", 1);
  GXC_CHECK(0 <= start && start < end && end <= x.shape()[axis] && step >= 1,
            "layer '{}': slice [{}:{}:{}] of {}", op.layerName(), start, end, step,
            shapeString(x.shape()));
  Shape shape = x.shape();
  shape[axis] = (end - start + step - 1) / step;
  Tensor result = makeResult(op, shape);
  // Element i of the result is the element of x at the same coordinates but along the axis,
  // where result coordinate c is x's start + c * step.
  for (int64_t i = 0; i < result.numel(); ++i) {
    Coords coords = unravelIndex(i, shape);
    coords[axis] = start + coords[axis] * step;
    copyElement(x, ravelIndex(coords, x.shape()), result, i);
  }
  return result;
}

Tensor concatOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, SIZE_MAX);  // any number of operands
  const Tensor& first = *operands[0];
  int64_t axis = normalizeAxis(op, op.attrs.getInt("axis", 0), first.rank());
  Shape shape = first.shape();
  shape[axis] = 0;
  for (const Tensor* t : operands) {
    checkSameDtype(op, *t);
    bool fits = t->rank() == first.rank();
    for (int64_t d = 0; fits && d < first.rank(); ++d)
      fits = d == axis || t->shape()[d] == first.shape()[d];
    GXC_CHECK(fits, "layer '{}': concat of {} and {} along axis {}", op.layerName(),
              shapeString(first.shape()), shapeString(t->shape()), axis);
    shape[axis] += t->shape()[axis];
  }
  Tensor result = makeResult(op, shape);
  // Each operand lands at its offset along the axis: the sum of the sizes before it.
  int64_t offset = 0;
  for (const Tensor* t : operands) {
    for (int64_t i = 0; i < t->numel(); ++i) {
      Coords coords = unravelIndex(i, t->shape());
      coords[axis] += offset;
      copyElement(*t, i, result, ravelIndex(coords, shape));
    }
    offset += t->shape()[axis];
  }
  return result;
}

Tensor copyOp(const Op& op, const Operands& operands) {
  // Devices do not matter on the host: `to` is a plain copy.
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  checkSameDtype(op, x);
  Tensor result = makeResult(op, x.shape());
  std::memcpy(result.data(), x.data(), x.nbytes());
  return result;
}

Tensor embeddingOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 2);
  const Tensor& indices = *operands[0];
  const Tensor& weight = *operands[1];
  GXC_CHECK(isInteger(indices.dtype()), "layer '{}': embedding indices of dtype {}", op.layerName(),
            dtypeName(indices.dtype()));
  GXC_CHECK(weight.rank() == 2, "layer '{}': embedding weight {}", op.layerName(),
            shapeString(weight.shape()));
  checkSameDtype(op, weight);
  int64_t rows = weight.shape()[0];
  int64_t dim = weight.shape()[1];
  Shape shape = indices.shape();
  shape.push_back(dim);
  Tensor result = makeResult(op, shape);
  for (int64_t i = 0; i < indices.numel(); ++i) {
    int64_t row = indices.loadInt(i);
    // Indices are data, not part of the model: a bad one is the user's error, found only
    // when the op runs (PyTorch's "index out of range in self").
    if (row < 0 || row >= rows)
      runtimeError(op.loc, "layer '{}': embedding index {} is out of range [0, {})", op.layerName(),
                   row, rows);
    for (int64_t k = 0; k < dim; ++k) copyElement(weight, row * dim + k, result, i * dim + k);
  }
  return result;
}

}  // namespace gxc::reference
