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
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Max:
      return reduceOp(op, operands);
    case OpKind::Reshape:
      return reshapeOp(op, operands);
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
    case OpKind::MseLoss:
      return mseLossOp(op, operands);
    case OpKind::CrossEntropy:
      return crossEntropyOp(op, operands);
    default:
      break;
  }
  GXC_CHECK(false, "layer '{}': no reference kernel for op kind {}", op.layerName(),
            static_cast<int>(op.kind));
  return {};
}

}  // namespace gxc
