// optimizer: a training step's update of every param, in place, as ops.
//
// Requires: a graph after autodiff (its outputs `grad.NAME` are the gradients of the params
//   NAME), and the graph attributes of the optimizer: `optimizer` ("sgd", "adam" or "adamw"),
//   `lr`, and as torch.optim has them, `momentum`, `dampening`, `nesterov`, `weight_decay`
//   (sgd) or `beta1`, `beta2`, `eps`, `weight_decay` (adam, adamw), each with torch's default
//   when absent. With the attribute `lr_per_step` (a `train: schedule:`), lr is not a constant
//   but the 0-d param `optimizer.lr` (role "optimizer_state", initialized to `lr`), which the
//   driver overwrites before each step with the schedule's value (tools/driver/train_schedule.h):
//   one compiled step serves every lr. With `clip_grad_max_norm`, the gradients are clipped
//   first, as torch.nn.utils.clip_grad_norm_ (passes/optimizer_clip.h). With `accumulate` K
//   >= 2, the gradients of K runs are summed (divided by K) in buffers first, and the update's
//   writes happen only on the runs that end K (passes/optimizer_accumulate.h).
// Guarantees: for every gradient output, the update of torch.optim's single-tensor algorithm
//   (SGD, Adam, AdamW, amsgrad and maximize off) is appended as elementwise ops, each
//   param's new value and its state's written back by `assign` ops into their own memory,
//   so that the next run of the graph is the next step. The state is params with role
//   "optimizer_state", initialized to zero as torch does lazily: NAME.momentum_buffer (sgd
//   with momentum), NAME.exp_avg and NAME.exp_avg_sq (adam, adamw), and one 0-d
//   `optimizer.step` counting the steps taken (adam, adamw, and sgd with dampening, whose
//   first step takes the gradient as it is). Last, a param of role "rng_state" (train-mode's
//   step count of the dropout masks) counts one more. The gradient outputs are removed: the step's
//   outputs are the model's, the loss among them. The ops carry their param's `loc`.
// Errors: an unknown optimizer, a negative or non-finite lr or hyperparameter, nesterov
//   without momentum or with dampening (as torch refuses them).
// Idempotent: no: it runs once, after autodiff.
#pragma once

#include "passes/pass.h"

namespace gxc {

class OptimizerPass : public Pass {
 public:
  std::string_view name() const override { return "optimizer"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
