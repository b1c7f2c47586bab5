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

// Float operands: f32, f16 and bf16 (computed in f32), or f64 (computed in double by every op
// that takes floats, on every layer: reference, host, generated kernels, cuBLAS).
inline void requireFloat(const Op& op, const TensorType& type) {
  if (!isFloat(type.dtype))
    fail(op, "needs a floating-point operand, got {}", type.withoutDevice());
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

// The arithmetic elementwise ops (infer_type_integer.cpp): float operands, or i32 and i64
// ones for the ops that keep integers integer, with integral numbers in their attributes.
void requireArithmeticOperand(const Op& op, const TensorType& type);
// The reductions' operand: float, or i32 and i64 for sum, prod, max and min.
void requireReducible(const Op& op, const TensorType& type);

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
