// The reference interpreter's entry point: dispatches each op kind to its kernel.
#include "runtime/reference/reference_ops.h"

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc {

Tensor evaluateReferenceOp(const Op& op, const std::vector<const Tensor*>& operands) {
  using namespace reference;
  // The elementwise ops by their class (ir/op_kinds.h), the rest one by one.
  if (isElementwiseUnary(op.kind)) return unaryOp(op, operands);
  if (isElementwiseBinary(op.kind)) return binaryOp(op, operands);
  if (isComparison(op.kind)) return compareOp(op, operands);
  if (isReduction(op.kind)) return reduceOp(op, operands);
  switch (op.kind) {
    case OpKind::Param:
      GXC_CHECK(false, "layer '{}': params are materialized, not evaluated", op.layerName());
      break;
    case OpKind::Matmul:
      return matmulOp(op, operands);
    case OpKind::Linear:
      return linearOp(op, operands);
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return softmaxOp(op, operands);
    case OpKind::LayerNorm:
      return layerNormOp(op, operands);
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Flatten:
      return reshapeOp(op, operands);
    case OpKind::Expand:
      return expandOp(op, operands);
    case OpKind::Triu:
    case OpKind::Tril:
      return triangleOp(op, operands);
    case OpKind::Gather:
      return gatherOp(op, operands);
    case OpKind::IndexSelect:
      return indexSelectOp(op, operands);
    case OpKind::OneHot:
      return oneHotOp(op, operands);
    case OpKind::Pad:
      return padOp(op, operands);
    case OpKind::Repeat:
      return repeatOp(op, operands);
    case OpKind::Cumsum:
      return cumsumOp(op, operands);
    case OpKind::Transpose:
      return transposeOp(op, operands);
    case OpKind::Concat:
      return concatOp(op, operands);
    case OpKind::Slice:
      return sliceOp(op, operands);
    case OpKind::To:
    case OpKind::Copy:
      return copyOp(op, operands);
    case OpKind::Embedding:
      return embeddingOp(op, operands);
    case OpKind::Conv2d:
      return conv2dOp(op, operands);
    case OpKind::ConvTranspose2d:
      return convTranspose2dOp(op, operands);
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
      return pool2dOp(op, operands);
    case OpKind::MaxPool2dBackward:
    case OpKind::AvgPool2dBackward:
      return pool2dBackwardOp(op, operands);
    case OpKind::MseLoss:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
    case OpKind::BceWithLogits:
      return elementwiseLossOp(op, operands);
    case OpKind::NllLoss:
    case OpKind::CrossEntropy:
      return classIndexLossOp(op, operands);
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
    case OpKind::LogicalNot:
      return logicalOp(op, operands);
    case OpKind::Where:
      return whereOp(op, operands);
    case OpKind::MaskedFill:
      return maskedFillOp(op, operands);
    case OpKind::Cast:
      return castOp(op, operands);
    case OpKind::ScaledDotProductAttention:
      return attentionOp(op, operands);
    case OpKind::RmsNorm:
      return rmsNormOp(op, operands);
    case OpKind::GroupNorm:
      return groupNormOp(op, operands);
    case OpKind::BatchNorm:
      return batchNormOp(op, operands);
    case OpKind::Topk:
    case OpKind::TopkIndices:
      return topkOp(op, operands);
    case OpKind::Dropout:
      return dropoutOp(op, operands);
    default:
      break;
  }
  GXC_CHECK(false, "layer '{}': no reference kernel for op kind {}", op.layerName(),
            static_cast<int>(op.kind));
  return {};
}

}  // namespace gxc
