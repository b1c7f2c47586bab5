#include "ir/infer_type.h"

#include <algorithm>

#include "ir/conv_geometry.h"
#include "ir/infer_type_movement.h"
#include "ir/infer_type_rules.h"
#include "ir/pool_geometry.h"

namespace gxc {
namespace {

using infer::broadcastOrFail;
using infer::fail;
using infer::operandType;
using infer::requireFloat;
using infer::requireSameDType;

int64_t axisOrFail(const Op& op, int64_t axis, const TensorType& type) {
  auto normalized = normalizeAxis(axis, type.rank());
  if (!normalized) fail(op, "axis {} is out of range for {}", axis, type.withoutDevice());
  return *normalized;
}

Shape elementwiseBinary(const Op& op) {
  const TensorType& a = operandType(op, 0);
  infer::requireArithmeticOperand(op, a);
  if (op.operands.size() == 1) return a.shape;
  const TensorType& b = operandType(op, 1);
  requireSameDType(op, a, b);
  return broadcastOrFail(op, a, b);
}

Shape matmul(const Op& op) {
  TensorType a = operandType(op, 0), b = operandType(op, 1);
  requireFloat(op, a);
  requireSameDType(op, a, b);
  for (const TensorType* t : {&a, &b})
    if (t->rank() < 2 || t->rank() > 3)
      fail(op, "needs 2-D or batched 3-D operands, got {} and {}", a.withoutDevice(),
           b.withoutDevice());
  Shape sa = a.shape, sb = b.shape;
  if (op.attrs.getBool("transpose_a", false)) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
  if (op.attrs.getBool("transpose_b", false)) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
  int64_t m = sa[sa.size() - 2], k = sa.back(), kb = sb[sb.size() - 2], n = sb.back();
  if (k != kb)
    fail(op, "inner dimensions differ: {} @ {} ({} vs {})", a.withoutDevice(), b.withoutDevice(), k,
         kb);
  if (sa.size() == 2 && sb.size() == 2) return {m, n};
  int64_t batchA = sa.size() == 3 ? sa[0] : 1, batchB = sb.size() == 3 ? sb[0] : 1;
  if (batchA != batchB && batchA != 1 && batchB != 1)
    fail(op, "batch dimensions differ: {} @ {}", a.withoutDevice(), b.withoutDevice());
  return {std::max(batchA, batchB), m, n};
}

Shape linear(const Op& op) {
  const TensorType& x = operandType(op, 0);
  const TensorType& w = operandType(op, 1);
  requireFloat(op, x);
  requireSameDType(op, x, w);
  int64_t in = op.attrs.getInt("in_features", 0), out = op.attrs.getInt("out_features", 0);
  if (x.rank() < 1 || x.shape.back() != in)
    fail(op, "input {} does not end in in_features = {}", x.withoutDevice(), in);
  if (w.shape != Shape{out, in})
    fail(op, "weight is {}, expected {}", w.withoutDevice(), shapeString({out, in}));
  if (op.operands.size() == 3) {
    const TensorType& bias = operandType(op, 2);
    requireSameDType(op, x, bias);
    if (bias.shape != Shape{out})
      fail(op, "bias is {}, expected {}", bias.withoutDevice(), shapeString({out}));
  }
  Shape shape = x.shape;
  shape.back() = out;
  return shape;
}

// conv2d's weight is [out, in / groups, kh, kw]; conv_transpose2d's [in, out / groups, kh, kw].
Shape conv2d(const Op& op) {
  const TensorType& x = operandType(op, 0);
  requireFloat(op, x);
  const bool transposed = op.kind == OpKind::ConvTranspose2d;
  ConvGeometry g = transposed ? convTranspose2dGeometry(op) : conv2dGeometry(op);
  Shape weight = transposed ? Shape{g.inChannels, g.outChannels / g.groups, g.kernelH, g.kernelW}
                            : Shape{g.outChannels, g.inChannels / g.groups, g.kernelH, g.kernelW};
  const TensorType& w = operandType(op, 1);
  requireSameDType(op, x, w);
  if (w.shape != weight)
    fail(op, "weight is {}, expected {}", w.withoutDevice(), shapeString(weight));
  if (g.bias != (op.operands.size() == 3))
    fail(op, "bias is {} but {} operands were given", g.bias, op.operands.size());
  if (op.operands.size() == 3) {
    const TensorType& bias = operandType(op, 2);
    requireSameDType(op, x, bias);
    if (bias.shape != Shape{g.outChannels})
      fail(op, "bias is {}, expected {}", bias.withoutDevice(), shapeString({g.outChannels}));
  }
  return {g.batch, g.outChannels, g.outH, g.outW};
}

Shape reduction(const Op& op) {
  const TensorType& x = operandType(op, 0);
  infer::requireReducible(op, x);
  bool keepdim = op.attrs.getBool("keepdim", false);
  std::vector<bool> reduced(x.shape.size(), false);
  if (auto axes = op.attrs.getAxes("axis")) {
    for (int64_t axis : *axes) {
      int64_t a = axisOrFail(op, axis, x);
      if (reduced[a]) fail(op, "axis {} is listed twice", axis);
      reduced[a] = true;
    }
  } else {
    std::fill(reduced.begin(), reduced.end(), true);
  }
  Shape shape;
  for (size_t i = 0; i < x.shape.size(); ++i) {
    if (!reduced[i])
      shape.push_back(x.shape[i]);
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

Shape reshape(const Op& op) {
  const TensorType& x = operandType(op, 0);
  Shape shape = *op.attrs.getIntList("shape");
  int64_t known = 1, inferredAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferredAt >= 0) fail(op, "shape {} has more than one -1", shapeString(shape));
      inferredAt = static_cast<int64_t>(i);
    } else if (shape[i] <= 0) {
      fail(op, "shape {} has a dimension that is neither positive nor -1", shapeString(shape));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      fail(op, "shape {} has more elements than fit in 64 bits", shapeString(shape));
    }
  }
  int64_t total = x.numel();
  if (inferredAt >= 0 && total % known == 0) shape[inferredAt] = total / known;
  if ((inferredAt >= 0 && total % known != 0) || (inferredAt < 0 && known != total))
    fail(op, "cannot reshape {} ({} elements) to {}", x.withoutDevice(), total,
         shapeString(*op.attrs.getIntList("shape")));
  return shape;
}

Shape transpose(const Op& op) {
  const TensorType& x = operandType(op, 0);
  std::vector<int64_t> perm(x.shape.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
  if (auto given = op.attrs.getIntList("perm")) perm = *given;
  std::vector<bool> seen(x.shape.size(), false);
  if (perm.size() != x.shape.size())
    fail(op, "perm {} does not match the rank of {}", shapeString(perm), x.withoutDevice());
  Shape shape;
  for (int64_t p : perm) {
    auto axis = normalizeAxis(p, x.rank());
    if (!axis || seen[*axis])
      fail(op, "perm {} is not a permutation of the axes of {}", shapeString(perm),
           x.withoutDevice());
    seen[*axis] = true;
    shape.push_back(x.shape[*axis]);
  }
  return shape;
}

Shape concat(const Op& op) {
  const TensorType& first = operandType(op, 0);
  int64_t axis = axisOrFail(op, op.attrs.getInt("axis", 0), first);
  Shape shape = first.shape;
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const TensorType& t = operandType(op, i);
    requireSameDType(op, first, t);
    bool compatible = t.rank() == first.rank();
    for (int64_t d = 0; compatible && d < first.rank(); ++d)
      compatible = d == axis || t.shape[d] == first.shape[d];
    if (!compatible)
      fail(op, "{} and {} differ outside axis {}", first.withoutDevice(), t.withoutDevice(), axis);
    if (__builtin_add_overflow(shape[axis], t.shape[axis], &shape[axis]))
      fail(op, "concatenated dimension overflows");
  }
  return shape;
}

Shape embedding(const Op& op) {
  const TensorType& indices = operandType(op, 0);
  const TensorType& weight = operandType(op, 1);
  if (!isInteger(indices.dtype))
    fail(op, "indices must be i32 or i64, got {}", indices.withoutDevice());
  requireFloat(op, weight);
  int64_t num = op.attrs.getInt("num_embeddings", 0), dim = op.attrs.getInt("embedding_dim", 0);
  if (weight.shape != Shape{num, dim})
    fail(op, "weight is {}, expected {}", weight.withoutDevice(), shapeString({num, dim}));
  Shape shape = indices.shape;
  shape.push_back(dim);
  return shape;
}

}  // namespace

Shape normalizedShapeOf(const Attrs& attrs, const Shape& x) {
  if (auto given = attrs.getAxes("normalized_shape")) return *given;
  return x.empty() ? Shape{} : Shape{x.back()};
}

double rmsNormDefaultEps(DType dtype) {
  switch (dtype) {
    case DType::F16:
      return 0x1p-10;
    case DType::BF16:
      return 0x1p-7;
    case DType::F32:
      return 0x1p-23;
    case DType::F64:
      return 0x1p-52;
    case DType::I32:
    case DType::I64:
    case DType::Bool:
      break;
  }
  GXC_CHECK(false, "rms_norm of {}", dtypeName(dtype));
  return 0;
}

std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

TensorType inferResultType(const Op& op) {
  TensorType result = op.result->type;
  if (op.kind == OpKind::Param) {
    GXC_CHECK(result.known, "param '{}' has no declared type", op.layerName());
    return result;
  }
  const TensorType& first = operandType(op, 0);
  result.known = true;
  result.dtype = first.dtype;
  switch (op.kind) {
    case OpKind::Param:
      break;
    case OpKind::Matmul:
      result.shape = matmul(op);
      break;
    case OpKind::Linear:
      result.shape = linear(op);
      break;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Pow:
    case OpKind::Minimum:
    case OpKind::Maximum:
      result.shape = elementwiseBinary(op);
      break;
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      requireFloat(op, first);
      axisOrFail(op, op.attrs.getInt("axis", -1), first);
      result.shape = first.shape;
      break;
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
    case OpKind::GroupNorm:
    case OpKind::BatchNorm:
    case OpKind::Dropout:
      result.shape = infer::normShape(op);
      break;
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Prod:
    case OpKind::Logsumexp:
    case OpKind::Var:
    case OpKind::Std:
      result.shape = reduction(op);
      if (isInteger(first.dtype) && op.kind != OpKind::Max && op.kind != OpKind::Min)
        result.dtype = DType::I64;  // torch.sum and torch.prod of integers
      break;
    case OpKind::Argmax:
    case OpKind::Argmin:
      result.shape = reduction(op);
      result.dtype = DType::I64;  // torch.argmax's indices
      break;
    case OpKind::Reshape:
      result.shape = reshape(op);
      break;
    case OpKind::Transpose:
      result.shape = transpose(op);
      break;
    case OpKind::Concat:
      result.shape = concat(op);
      break;
    case OpKind::Slice:
    case OpKind::Split:
    case OpKind::Chunk:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Flatten:
    case OpKind::Expand:
    case OpKind::Triu:
    case OpKind::Tril:
      result.shape = movementResultShape(op);
      break;
    case OpKind::Gather:
    case OpKind::IndexSelect:
    case OpKind::OneHot:
    case OpKind::Pad:
    case OpKind::Repeat:
    case OpKind::Cumsum: {
      TensorType indexed = indexingResultType(op);
      result.dtype = indexed.dtype;
      result.shape = indexed.shape;
      break;
    }
    case OpKind::Embedding:
      result.shape = embedding(op);
      result.dtype = operandType(op, 1).dtype;
      break;
    case OpKind::To:
    case OpKind::Copy:
      result.shape = first.shape;
      break;
    case OpKind::Assign:
      result.shape = assignedShape(op);
      break;
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
    case OpKind::LogicalNot:
    case OpKind::Where:
    case OpKind::MaskedFill:
    case OpKind::Cast:
      result = infer::inferAnyDTypeElementwise(op, result);
      break;
    case OpKind::Conv2d:
    case OpKind::ConvTranspose2d:
      result.shape = conv2d(op);
      break;
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::MaxPool2dBackward:
    case OpKind::AvgPool2dBackward:
      requireFloat(op, first);
      result.shape = inferPool2dShape(op);
      break;
    case OpKind::MseLoss:
    case OpKind::CrossEntropy:
    case OpKind::NllLoss:
    case OpKind::BceWithLogits:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
      result.shape = infer::lossShape(op);
      break;
    case OpKind::ScaledDotProductAttention:
      result.shape = infer::attentionShape(op);
      break;
    case OpKind::Topk:
    case OpKind::TopkIndices:
      result.shape = infer::topkShape(op);
      if (op.kind == OpKind::TopkIndices) result.dtype = DType::I64;  // torch.topk's indices
      break;
    default:
      GXC_CHECK(isElementwiseUnary(op.kind), "no shape rule for op {}", opName(op.kind));
      infer::requireArithmeticOperand(op, first);
      if (op.kind == OpKind::Gelu) {
        std::string approximate = op.attrs.getString("approximate", "none");
        if (approximate != "none" && approximate != "tanh")
          fail(op, "approximate must be none or tanh, got '{}'", approximate);
      }
      if (op.kind == OpKind::Clamp && !op.attrs.has("min") && !op.attrs.has("max"))
        fail(op, "needs `min`, `max` or both");
      result.shape = first.shape;
  }
  if (!checkedNumel(result.shape))
    fail(op, "result shape {} has more elements than fit in 64 bits", shapeString(result.shape));
  return result;
}

}  // namespace gxc
