#include "ir/infer_type_movement.h"

#include <algorithm>

#include "ir/infer_type.h"
#include "ir/infer_type_rules.h"

namespace gxc {
namespace {

using infer::fail;
using infer::operandType;

Shape slice(const Op& op) {
  const TensorType& x = operandType(op, 0);
  if (!op.attrs.has("start") || !op.attrs.has("end"))
    fail(op, "needs `start` and `end` in the IR (a model's slice has them resolved)");
  auto axis = normalizeAxis(op.attrs.getInt("axis", 0), x.rank());
  if (!axis)
    fail(op, "axis {} is out of range for {}", op.attrs.getInt("axis", 0), x.withoutDevice());
  SliceBounds bounds{op.attrs.getInt("start", 0), op.attrs.getInt("end", 0),
                     op.attrs.getInt("step", 1)};
  if (bounds.step < 1) fail(op, "step must be positive, got {}", bounds.step);
  if (bounds.start < 0 || bounds.end <= bounds.start || bounds.end > x.shape[*axis])
    fail(op, "[{}, {}) is not a non-empty range of axis {} of {}", bounds.start, bounds.end, *axis,
         x.withoutDevice());
  Shape shape = x.shape;
  shape[*axis] = bounds.size();
  return shape;
}

Shape squeeze(const Op& op) {
  const TensorType& x = operandType(op, 0);
  Shape shape;
  if (!op.attrs.has("axis")) {
    for (int64_t d : x.shape)
      if (d != 1) shape.push_back(d);
    return shape;
  }
  int64_t given = op.attrs.getInt("axis", 0);
  // torch.squeeze(x, dim) of a 0-d x takes dim -1 or 0 and changes nothing.
  auto axis = normalizeAxis(given, std::max<int64_t>(x.rank(), 1));
  if (!axis) fail(op, "axis {} is out of range for {}", given, x.withoutDevice());
  shape = x.shape;
  // As torch: squeezing a dim that is not of size 1 leaves x as it is.
  if (x.rank() > 0 && shape[*axis] == 1) shape.erase(shape.begin() + *axis);
  return shape;
}

Shape unsqueeze(const Op& op) {
  const TensorType& x = operandType(op, 0);
  int64_t given = op.attrs.getInt("axis", 0);
  // The new dim may go anywhere among rank + 1 places: axis in [-rank-1, rank].
  auto axis = normalizeAxis(given, x.rank() + 1);
  if (!axis)
    fail(op, "axis {} is out of range [{}, {}] for {}", given, -x.rank() - 1, x.rank(),
         x.withoutDevice());
  Shape shape = x.shape;
  shape.insert(shape.begin() + *axis, 1);
  return shape;
}

Shape flatten(const Op& op) {
  const TensorType& x = operandType(op, 0);
  if (x.rank() == 0) return {1};  // torch.flatten of a 0-d tensor gives one element, 1-D
  int64_t startGiven = op.attrs.getInt("start_dim", 0), endGiven = op.attrs.getInt("end_dim", -1);
  auto start = normalizeAxis(startGiven, x.rank()), end = normalizeAxis(endGiven, x.rank());
  if (!start) fail(op, "start_dim {} is out of range for {}", startGiven, x.withoutDevice());
  if (!end) fail(op, "end_dim {} is out of range for {}", endGiven, x.withoutDevice());
  if (*start > *end)
    fail(op, "start_dim {} comes after end_dim {} in {}", startGiven, endGiven, x.withoutDevice());
  Shape shape(x.shape.begin(), x.shape.begin() + *start);
  int64_t merged = 1;
  for (int64_t d = *start; d <= *end; ++d) merged *= x.shape[d];
  shape.push_back(merged);
  shape.insert(shape.end(), x.shape.begin() + *end + 1, x.shape.end());
  return shape;
}

Shape expand(const Op& op) {
  const TensorType& x = operandType(op, 0);
  const std::vector<int64_t> wanted = *op.attrs.getIntList("shape");
  int64_t rank = static_cast<int64_t>(wanted.size()), lead = rank - x.rank();
  if (lead < 0) fail(op, "shape {} has fewer dims than {}", shapeString(wanted), x.withoutDevice());
  Shape shape(wanted.size());
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = wanted[d];
    if (d < lead) {
      if (size <= 0)
        fail(op, "new leading dim {} of shape {} must be positive, got {} (expanding {})", d,
             shapeString(wanted), size, x.withoutDevice());
      shape[d] = size;
      continue;
    }
    int64_t have = x.shape[d - lead];
    if (size == -1) size = have;
    if (size <= 0 || (have != 1 && size != have))
      fail(op, "cannot expand {} to {}: dim {} is {}, and only a dim of size 1 expands",
           x.withoutDevice(), shapeString(wanted), d, have);
    shape[d] = size;
  }
  return shape;
}

Shape triangle(const Op& op) {
  const TensorType& x = operandType(op, 0);
  if (x.rank() < 2) fail(op, "needs at least 2 dims, got {}", x.withoutDevice());
  return x.shape;
}

}  // namespace

Shape movementResultShape(const Op& op) {
  switch (op.kind) {
    case OpKind::Slice:
      return slice(op);
    case OpKind::Squeeze:
      return squeeze(op);
    case OpKind::Unsqueeze:
      return unsqueeze(op);
    case OpKind::Flatten:
      return flatten(op);
    case OpKind::Expand:
      return expand(op);
    case OpKind::Triu:
    case OpKind::Tril:
      return triangle(op);
    case OpKind::Split:
    case OpKind::Chunk:
      fail(op, "is a layer with several results, which the IR holds as one slice per result");
    default:
      GXC_CHECK(false, "no movement shape rule for op {}", opName(op.kind));
  }
  return {};
}

SliceBounds pythonSlice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                        int64_t step) {
  auto resolve = [dim](std::optional<int64_t> bound, int64_t otherwise) {
    if (!bound) return otherwise;
    int64_t at = *bound < 0 ? *bound + dim : *bound;
    return std::clamp<int64_t>(at, 0, dim);
  };
  return {resolve(start, 0), resolve(end, dim), step};
}

std::vector<int64_t> splitSizes(int64_t dim, int64_t size) {
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < dim; at += size) sizes.push_back(std::min(size, dim - at));
  return sizes;
}

std::vector<int64_t> chunkSizes(int64_t dim, int64_t chunks) {
  return splitSizes(dim, (dim + chunks - 1) / chunks);
}

Shape assignedShape(const Op& op) {
  const TensorType& param = infer::operandType(op, 0);
  const TensorType& value = infer::operandType(op, 1);
  if (op.operands[0]->producer == nullptr || op.operands[0]->producer->kind != OpKind::Param)
    infer::fail(op, "assign: '{}' is not a param", op.operands[0]->name);
  if (value.shape != param.shape || value.dtype != param.dtype)
    infer::fail(op, "assign: '{}' is {} but param '{}' is {}", op.operands[1]->name,
                value.withoutDevice(), op.operands[0]->name, param.withoutDevice());
  return param.shape;
}

}  // namespace gxc
