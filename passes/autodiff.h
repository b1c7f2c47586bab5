// autodiff: the backward graph of a training step, in the IR.
//
// Requires: a typed graph (after infer-shapes, before assign-devices) whose attribute
//   `train_loss` names a 0-d floating-point value computed by a layer: the objective.
// Guarantees: for every trainable param (a `param` op neither `frozen` nor made by the
//   compiler, of a floating dtype) that the loss depends on, ops computing d loss / d param
//   are appended, reverse-mode, from the loss back, by each op's rule
//   (passes/autodiff_rules.h), and the gradient becomes the graph output `grad.NAME` (NAME
//   the param's value). The loss becomes an output if it was not one. d loss / d loss is a
//   0-d param of value 1 with role "gradient_seed". Each gradient op's `loc` is the layer it
//   differentiates. Params the loss does not depend on get no gradient (as PyTorch leaves
//   their .grad None). Forward ops are not changed.
// Errors: no `train_loss`, a loss that is not 0-d, or not a layer, or that depends on no
//   trainable param; a layer on the way whose op (or this use of it) has no rule yet,
//   naming the layer and how to avoid it.
// Idempotent: no: it runs once, on the forward graph.
#pragma once

#include "passes/pass.h"

namespace gxc {

class AutodiffPass : public Pass {
 public:
  std::string_view name() const override { return "autodiff"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

// Whether `param` (a param op) is trained: not frozen, not a module buffer (batch_norm's
// running statistics, which train-mode updates), not made by the compiler, floating.
bool isTrainableParam(const Op& param);

}  // namespace gxc
