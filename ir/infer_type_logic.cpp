// Shape and dtype rules of the elementwise ops of any dtype: the comparisons, logical_and,
// logical_or, logical_not, where, masked_fill and cast. Part of inferResultType (infer_type.h).
#include "ir/did_you_mean.h"
#include "ir/infer_type_rules.h"

namespace gxc::infer {
namespace {

// Comparisons (one dtype on both sides) and logical_and/or (any dtypes): a and b broadcast, or
// a alone with `scalar`.
Shape compareOrLogical(const Op& op) {
  const TensorType& a = operandType(op, 0);
  if (op.operands.size() == 1) return a.shape;
  const TensorType& b = operandType(op, 1);
  if (isComparison(op.kind)) requireSameDType(op, a, b);
  return broadcastOrFail(op, a, b);
}

// torch.where with one dtype for a and b (torch would promote; gxc asks for a cast).
Shape where(const Op& op) {
  const TensorType& cond = operandType(op, 0);
  const TensorType& a = operandType(op, 1);
  const TensorType& b = operandType(op, 2);
  if (cond.dtype != DType::Bool) fail(op, "cond must be bool, got {}", cond.withoutDevice());
  if (a.dtype != b.dtype)
    fail(op, "a and b must have one dtype, got {} and {}", a.withoutDevice(), b.withoutDevice());
  TensorType ab = TensorType::of(a.dtype, broadcastOrFail(op, a, b));
  auto shape = broadcastShapes(cond.shape, ab.shape);
  if (!shape)
    fail(op, "shapes {}, {} and {} cannot be broadcast together", cond.withoutDevice(),
         a.withoutDevice(), b.withoutDevice());
  return *shape;
}

// The mask broadcasts to x's shape, never x to the mask's (as Tensor.masked_fill).
Shape maskedFill(const Op& op) {
  const TensorType& x = operandType(op, 0);
  const TensorType& mask = operandType(op, 1);
  if (mask.dtype != DType::Bool) fail(op, "mask must be bool, got {}", mask.withoutDevice());
  if (broadcastShapes(x.shape, mask.shape) != x.shape)
    fail(op, "mask {} does not broadcast to x {}", mask.withoutDevice(), x.withoutDevice());
  return x.shape;
}

}  // namespace

TensorType inferAnyDTypeElementwise(const Op& op, TensorType result) {
  const TensorType& first = operandType(op, 0);
  switch (op.kind) {
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
      result.shape = compareOrLogical(op);
      result.dtype = DType::Bool;
      break;
    case OpKind::LogicalNot:
      result.shape = first.shape;
      result.dtype = DType::Bool;
      break;
    case OpKind::Where:
      result.shape = where(op);
      result.dtype = operandType(op, 1).dtype;
      break;
    case OpKind::MaskedFill:
      result.shape = maskedFill(op);
      break;
    case OpKind::Cast: {
      std::string name = op.attrs.getString("dtype", "");
      auto dtype = parseDType(name);
      if (!dtype) fail(op, "unknown dtype '{}'{}", name, unknownDTypeHint(name));
      result.shape = first.shape;
      result.dtype = *dtype;
      break;
    }
    default:
      GXC_CHECK(false, "{} is not an elementwise op of any dtype", opName(op.kind));
  }
  return result;
}

}  // namespace gxc::infer
