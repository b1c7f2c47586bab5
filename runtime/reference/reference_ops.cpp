// The reference interpreter's entry point: dispatches each op kind to its kernel.
#include "runtime/reference/reference_ops.h"

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc {

Tensor evaluateReferenceOp(const Op& op, const std::vector<const Tensor*>& operands) {
  using namespace reference;
  switch (op.kind) {
    case OpKind::Param:
      GXC_CHECK(false, "layer '{}': params are materialized, not evaluated", op.layerName());
      break;
    case OpKind::Matmul:
      return matmulOp(op, operands);
    case OpKind::Linear:
      return linearOp(op, operands);
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Pow:
    case OpKind::Minimum:
    case OpKind::Maximum:
      return binaryOp(op, operands);
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
      return unaryOp(op, operands);
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
    case OpKind::MseLoss:
      return mseLossOp(op, operands);
    case OpKind::CrossEntropy:
      return crossEntropyOp(op, operands);
  }
  GXC_CHECK(false, "layer '{}': no reference kernel for op kind {}", op.layerName(),
            static_cast<int>(op.kind));
  return {};
}

}  // namespace gxc
