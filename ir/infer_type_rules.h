// Internal to shape inference (infer_type.cpp and the files of its rules): the helpers every
// rule shares, and the rules that live in files of their own.
#pragma once

#include <utility>

#include "ir/diagnostic.h"
#include "ir/infer_type.h"

namespace gxc::infer {

// Every message starts with the layer and the op, so the user can find it in the model.
template <typename... Args>
[[noreturn]] inline void fail(const Op& op, fmt::format_string<Args...> format, Args&&... args) {
  modelError(op.loc, "layer '{}': {}: {}", op.layerName(), opName(op.kind),
             fmt::format(format, std::forward<Args>(args)...));
}

inline const TensorType& operandType(const Op& op, size_t i) {
  GXC_CHECK(op.operands[i]->type.known, "operand {} of '{}' has no inferred type", i,
            op.layerName());
  return op.operands[i]->type;
}

// The ops that compute f64 in double on every layer (reference, host, generated kernels,
// cuBLAS): the elementwise ops and those listed here. The others (conv2d and conv_transpose2d,
// which the cpu platform runs through oneDNN, which has no f64 convolution) compute in f32
// only, so they refuse f64 rather than silently computing it in f32.
inline bool computesF64(OpKind kind) {
  if (isElementwise(kind)) return true;
  switch (kind) {
    case OpKind::Matmul:
    case OpKind::Linear:
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
    case OpKind::GroupNorm:
    case OpKind::BatchNorm:
    case OpKind::Dropout:
    case OpKind::MseLoss:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
    case OpKind::BceWithLogits:
    case OpKind::NllLoss:
    case OpKind::CrossEntropy:
    case OpKind::ScaledDotProductAttention:
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::Embedding:  // its weight: rows are copied, bit for bit
      return true;
    default:
      return isReduction(kind);  // sum ... std, argmax and argmin
  }
}

// Float operands; f64 only for the ops that compute it in double (computesF64).
inline void requireFloat(const Op& op, const TensorType& type) {
  if (!isFloat(type.dtype))
    fail(op, "needs a floating-point operand, got {}", type.withoutDevice());
  if (type.dtype == DType::F64 && !computesF64(op.kind))
    fail(op, "f64 operands are not supported by this op yet, got {}; cast to f32 first",
         type.withoutDevice());
}

inline void requireSameDType(const Op& op, const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype)
    fail(op, "operand dtypes differ: {} and {}", a.withoutDevice(), b.withoutDevice());
}

inline Shape broadcastOrFail(const Op& op, const TensorType& a, const TensorType& b) {
  auto shape = broadcastShapes(a.shape, b.shape);
  if (!shape)
    fail(op, "shapes {} and {} cannot be broadcast together", a.withoutDevice(), b.withoutDevice());
  return *shape;
}

// The comparisons, logical ops, where, masked_fill and cast (infer_type_logic.cpp): `result`
// (the operand's dtype and the op's device) with the op's shape and dtype set.
TensorType inferAnyDTypeElementwise(const Op& op, TensorType result);

// infer_type_loss.cpp: mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy_with_logits,
// nll_loss and cross_entropy.
Shape lossShape(const Op& op);
// infer_type_norm.cpp: layer_norm, rms_norm, group_norm, batch_norm and dropout.
Shape normShape(const Op& op);
// scaled_dot_product_attention (infer_type_attention.cpp): the result's shape.
Shape attentionShape(const Op& op);
// topk and topk_indices (infer_type_topk.cpp): x's shape with k along the axis.
Shape topkShape(const Op& op);

}  // namespace gxc::infer
