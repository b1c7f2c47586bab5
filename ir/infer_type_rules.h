// Internal to the shape rules (infer_type*.cpp): the checks they share, and the rules that
// live in files of their own. Every failure is a model error at the op, naming its layer.
#pragma once

#include <fmt/format.h>

#include "ir/infer_type.h"

namespace gxc::rules {

// Every message starts with the layer and the op, so the user can find it in the model.
template <typename... Args>
[[noreturn]] void fail(const Op& op, fmt::format_string<Args...> format, Args&&... args) {
  modelError(op.loc, "layer '{}': {}: {}", op.layerName(), opName(op.kind),
             fmt::format(format, std::forward<Args>(args)...));
}

const TensorType& operandType(const Op& op, size_t i);
void requireFloat(const Op& op, const TensorType& type);
void requireSameDType(const Op& op, const TensorType& a, const TensorType& b);

// infer_type_loss.cpp: mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy_with_logits,
// nll_loss and cross_entropy.
Shape lossShape(const Op& op);
// infer_type_norm.cpp: layer_norm, rms_norm, group_norm and dropout.
Shape normShape(const Op& op);

}  // namespace gxc::rules
