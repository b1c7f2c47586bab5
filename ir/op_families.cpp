// The families of op kinds that passes and codegen ask about (elementwise, reductions, views,
// which are model layers, ...): predicates on OpKind alone, declared in op_kinds.h beside the
// schema table (op_kinds.cpp) they do not need.
#include "ir/op_kinds.h"

namespace gxc {

bool isModelOp(OpKind kind) {
  return kind != OpKind::Param && kind != OpKind::Copy && kind != OpKind::TopkIndices &&
         kind != OpKind::Assign && kind != OpKind::MaxPool2dBackward &&
         kind != OpKind::AvgPool2dBackward;
}

bool isMultiResultLayer(OpKind kind) {
  return kind == OpKind::Split || kind == OpKind::Chunk || kind == OpKind::Topk;
}

bool isReshapeView(OpKind kind) {
  return kind == OpKind::Reshape || kind == OpKind::Squeeze || kind == OpKind::Unsqueeze ||
         kind == OpKind::Flatten;
}

bool isScheduleAttr(std::string_view name) {
  return name == "stream" || name == "wait" || name == "record" || name == "offset";
}

bool isKernelAttr(std::string_view name) { return name == "kernel"; }

bool isElementwiseBinary(OpKind kind) {
  return kind == OpKind::Add || kind == OpKind::Sub || kind == OpKind::Mul || kind == OpKind::Div ||
         kind == OpKind::Pow || kind == OpKind::Minimum || kind == OpKind::Maximum;
}

bool isElementwiseUnary(OpKind kind) {
  switch (kind) {
    case OpKind::Relu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Neg:
    case OpKind::Sqrt:
    case OpKind::Gelu:
    case OpKind::Abs:
    case OpKind::Reciprocal:
    case OpKind::Rsqrt:
    case OpKind::Erf:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Sign:
    case OpKind::Silu:
    case OpKind::Hardsigmoid:
    case OpKind::Hardswish:
    case OpKind::LeakyRelu:
    case OpKind::Elu:
    case OpKind::Softplus:
    case OpKind::Clamp:
      return true;
    default:
      return false;
  }
}

bool isReduction(OpKind kind) {
  switch (kind) {
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Prod:
    case OpKind::Argmax:
    case OpKind::Argmin:
    case OpKind::Logsumexp:
    case OpKind::Var:
    case OpKind::Std:
      return true;
    default:
      return false;
  }
}

bool isComparison(OpKind kind) {
  return kind == OpKind::Eq || kind == OpKind::Ne || kind == OpKind::Lt || kind == OpKind::Le ||
         kind == OpKind::Gt || kind == OpKind::Ge;
}

bool isElementwiseAnyDType(OpKind kind) {
  return isComparison(kind) || kind == OpKind::LogicalAnd || kind == OpKind::LogicalOr ||
         kind == OpKind::LogicalNot || kind == OpKind::Where || kind == OpKind::MaskedFill ||
         kind == OpKind::Cast;
}

bool isElementwise(OpKind kind) {
  return isElementwiseUnary(kind) || isElementwiseBinary(kind) || isElementwiseAnyDType(kind);
}

bool isChannelwise(OpKind kind) { return kind == OpKind::BatchNorm; }

bool takesScalar(OpKind kind) {
  return isElementwiseBinary(kind) || isComparison(kind) || kind == OpKind::LogicalAnd ||
         kind == OpKind::LogicalOr;
}

}  // namespace gxc
