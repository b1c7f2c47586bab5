// train-mode: the forward as PyTorch's model.train() runs it.
//
// Requires: a typed graph (after infer-shapes), before data-parallel and pipeline-stages: the
//   batch statistics it writes are then reductions over the batch, which those passes split
//   and combine exactly (every device normalizes by the whole batch's statistics, as
//   SyncBatchNorm does; so placement never changes the answers).
// Guarantees:
//   - Each batch_norm op becomes ops over x [N, C, ...]: the batch mean and biased variance
//     of each channel (means over N and the spatial dims, keepdim), x normalized by them, then
//     the weight and bias; the op itself becomes the last of these, so its name and readers
//     stay. Its running statistics are updated by `assign` as nn.BatchNorm's are: running =
//     (1 - momentum) running + momentum batch, the variance unbiased (times n / (n - 1), n
//     the elements per channel), and `NAME.num_batches_tracked` counts one more. These three
//     params get `buffer` (updated by assign, never by a gradient).
//   - Each dropout with p > 0 gets a second operand, the step count `train.step` (a 0-d i64
//     param of role "rng_state", zero at the first step; the optimizer pass counts it up after
//     the update), and a `seed` from the graph's `seed` and the layer's name: its mask is then
//     drawn per element from the seed, the step and the element's index (ir/op_kinds.cpp).
//   Ops carry the `loc` of their layer.
// Errors: a batch_norm whose running statistics are tensors the model passes in (F.batch_norm's
//   form), not params it owns: training must update them.
// Idempotent: yes: no batch_norm is left, and a dropout with a step count is left as it is.
#pragma once

#include "passes/pass.h"

namespace gxc {

class TrainModePass : public Pass {
 public:
  std::string_view name() const override { return "train-mode"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
