// Shape and dtype rules of the format 1.1 ops that index, pad, tile or accumulate: gather,
// index_select, one_hot, pad, repeat, cumsum (ir/infer_type_movement.h declares them).
#include <cmath>

#include "ir/infer_type.h"
#include "ir/infer_type_movement.h"
#include "ir/infer_type_rules.h"

namespace gxc {
namespace {

using infer::fail;
using infer::operandType;

int64_t axisOf(const Op& op, const TensorType& x) {
  int64_t given = op.attrs.getInt("axis", 0);
  auto axis = normalizeAxis(given, x.rank());
  if (!axis) fail(op, "axis {} is out of range for {}", given, x.withoutDevice());
  return *axis;
}

TensorType gather(const Op& op) {
  const TensorType& x = operandType(op, 0);
  const TensorType& index = operandType(op, 1);
  int64_t axis = axisOf(op, x);
  if (index.dtype != DType::I64) fail(op, "index must be i64, got {}", index.withoutDevice());
  // torch.gather: as many dims as x, and no larger than x but along `axis`.
  bool fits = index.rank() == x.rank();
  for (int64_t d = 0; fits && d < x.rank(); ++d) fits = d == axis || index.shape[d] <= x.shape[d];
  if (!fits)
    fail(op, "index {} must have the rank of x {} and no larger dims but along axis {}",
         index.withoutDevice(), x.withoutDevice(), axis);
  return TensorType::of(x.dtype, index.shape);
}

TensorType indexSelect(const Op& op) {
  const TensorType& x = operandType(op, 0);
  const TensorType& index = operandType(op, 1);
  int64_t axis = axisOf(op, x);
  if (!isInteger(index.dtype) || index.rank() > 1)
    fail(op, "index must be 1-D i64 (or i32), got {} for x {}", index.withoutDevice(),
         x.withoutDevice());
  Shape shape = x.shape;
  shape[axis] = index.numel();
  return TensorType::of(x.dtype, shape);
}

TensorType oneHot(const Op& op) {
  const TensorType& x = operandType(op, 0);
  if (x.dtype != DType::I64) fail(op, "x must be i64 class indices, got {}", x.withoutDevice());
  if (!op.attrs.has("num_classes") || op.attrs.getInt("num_classes", -1) == -1)
    fail(op,
         "needs `num_classes`: torch's default (-1: the largest index + 1) depends on the data, "
         "which gxc does not see when it compiles");
  int64_t classes = op.attrs.getInt("num_classes", 0);
  if (classes <= 0) fail(op, "num_classes must be positive, got {}", classes);
  Shape shape = x.shape;
  shape.push_back(classes);
  return TensorType::of(DType::I64, shape);
}

TensorType pad(const Op& op) {
  const TensorType& x = operandType(op, 0);
  const std::vector<int64_t> pads = *op.attrs.getIntList("pad");
  std::string mode = op.attrs.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "replicate")
    fail(op, "mode must be constant, reflect or replicate, got '{}'", mode);
  if (pads.size() % 2 != 0 || static_cast<int64_t>(pads.size()) > 2 * x.rank())
    fail(op, "pad {} must hold a (before, after) pair per padded dim, at most {} for {}",
         shapeString(pads), 2 * x.rank(), x.withoutDevice());
  if (op.attrs.has("value") && mode != "constant")
    fail(op, "value is for mode constant only, not {} (as F.pad)", mode);
  double value = op.attrs.getFloat("value", 0.0);
  if (isInteger(x.dtype) && value != std::trunc(value))
    fail(op, "value {} is not an integer, and x is {}", value, x.withoutDevice());
  Shape shape = x.shape;
  // Pair p pads dim rank-1-p: the last dim first, as F.pad reads its list.
  for (size_t p = 0; p < pads.size() / 2; ++p) {
    int64_t d = x.rank() - 1 - static_cast<int64_t>(p);
    int64_t before = pads[2 * p], after = pads[2 * p + 1];
    if (mode != "constant" && (before < 0 || after < 0))
      fail(op, "pad {} is negative, which only mode constant takes", shapeString(pads));
    if (mode == "reflect" && (before >= x.shape[d] || after >= x.shape[d]))
      fail(op, "reflect pad {} of dim {} must be less than its size {} in {}", shapeString(pads), d,
           x.shape[d], x.withoutDevice());
    shape[d] += before + after;
    if (shape[d] <= 0)
      fail(op, "pad {} leaves dim {} of {} empty, and gxc has no tensors of size 0",
           shapeString(pads), d, x.withoutDevice());
  }
  return TensorType::of(x.dtype, shape);
}

TensorType repeat(const Op& op) {
  const TensorType& x = operandType(op, 0);
  const std::vector<int64_t> repeats = *op.attrs.getIntList("repeats");
  int64_t lead = static_cast<int64_t>(repeats.size()) - x.rank();
  if (lead < 0)
    fail(op, "repeats {} has fewer entries than {} has dims", shapeString(repeats),
         x.withoutDevice());
  Shape shape;
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] <= 0)
      fail(op, "repeats {} must be positive (gxc has no tensors of size 0)", shapeString(repeats));
    int64_t have = static_cast<int64_t>(d) < lead ? 1 : x.shape[d - lead];
    int64_t size = 0;
    if (__builtin_mul_overflow(have, repeats[d], &size))
      fail(op, "repeats {} of {} overflow", shapeString(repeats), x.withoutDevice());
    shape.push_back(size);
  }
  return TensorType::of(x.dtype, shape);
}

TensorType cumsum(const Op& op) {
  const TensorType& x = operandType(op, 0);
  axisOf(op, x);
  // As torch.cumsum: integers sum as i64.
  return TensorType::of(isFloat(x.dtype) ? x.dtype : DType::I64, x.shape);
}

}  // namespace

TensorType indexingResultType(const Op& op) {
  switch (op.kind) {
    case OpKind::Gather:
      return gather(op);
    case OpKind::IndexSelect:
      return indexSelect(op);
    case OpKind::OneHot:
      return oneHot(op);
    case OpKind::Pad:
      return pad(op);
    case OpKind::Repeat:
      return repeat(op);
    case OpKind::Cumsum:
      return cumsum(op);
    default:
      GXC_CHECK(false, "no indexing type rule for op {}", opName(op.kind));
  }
  return {};
}

}  // namespace gxc
