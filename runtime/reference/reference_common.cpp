// Shape and index helpers shared by the reference kernels: result allocation, operand
// checks, axis normalization, row-major (un)raveling and NumPy broadcasting.
#include <algorithm>
#include <cstring>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor makeResult(const Op& op, const Shape& shape) {
  const TensorType& type = op.result->type;
  GXC_CHECK(type.known, "layer '{}': {} evaluated before its result type was inferred",
            op.layerName(), opName(op.kind));
  GXC_CHECK(type.shape == shape, "layer '{}': {} computes shape {} but the inferred type is {}",
            op.layerName(), opName(op.kind), shapeString(shape), type.withoutDevice());
  return Tensor(type.dtype, type.shape);
}

void checkFloatOperands(const Op& op, const Operands& operands,
                        const std::vector<size_t>& indices) {
  DType first = operands.at(indices.at(0))->dtype();
  for (size_t i : indices) {
    DType dtype = operands.at(i)->dtype();
    GXC_CHECK(isFloat(dtype) && dtype == first,
              "layer '{}': {} operand {} is {}, expected float operands of one dtype ({})",
              op.layerName(), opName(op.kind), i, dtypeName(dtype), dtypeName(first));
  }
}

void checkOperandCount(const Op& op, const Operands& operands, size_t min, size_t max) {
  GXC_CHECK(operands.size() >= min && operands.size() <= max,
            "layer '{}': {} given {} operands, expected {} to {}", op.layerName(), opName(op.kind),
            operands.size(), min, max);
  GXC_CHECK(operands.size() == op.operands.size(), "layer '{}': {} tensors given for {} operands",
            op.layerName(), operands.size(), op.operands.size());
}

int64_t normalizeAxis(const Op& op, int64_t axis, int64_t rank) {
  GXC_CHECK(axis >= -rank && axis < rank, "layer '{}': axis {} out of range for rank {}",
            op.layerName(), axis, rank);
  return axis < 0 ? axis + rank : axis;
}

Coords unravelIndex(int64_t index, const Shape& shape) {
  Coords coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
  return coords;
}

int64_t ravelIndex(const Coords& coords, const Shape& shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coords[d];
  return index;
}

Shape broadcastShapes(const Op& op, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Dims are matched from the right; a missing dim acts as size 1.
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    GXC_CHECK(da == db || da == 1 || db == 1, "layer '{}': shapes {} and {} do not broadcast",
              op.layerName(), shapeString(a), shapeString(b));
    out[rank - 1 - i] = std::max(da, db);
  }
  return out;
}

int64_t broadcastIndex(const Coords& outCoords, const Shape& shape) {
  size_t skipped = outCoords.size() - shape.size();
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t coord = shape[d] == 1 ? 0 : outCoords[skipped + d];
    index = index * shape[d] + coord;
  }
  return index;
}

void copyElement(const Tensor& src, int64_t srcIndex, Tensor& dst, int64_t dstIndex) {
  size_t size = dtypeSize(src.dtype());
  GXC_CHECK(dst.dtype() == src.dtype(), "bitwise copy from {} to {}", dtypeName(src.dtype()),
            dtypeName(dst.dtype()));
  std::memcpy(dst.data() + static_cast<size_t>(dstIndex) * size,
              src.data() + static_cast<size_t>(srcIndex) * size, size);
}

void storeComputed(Tensor& t, int64_t index, double value) {
  if (t.dtype() == DType::F64)
    t.storeDouble(index, value);
  else
    t.storeFloat(index, static_cast<float>(value));
}

}  // namespace gxc::reference
