// The optimizer pass's gradient clipping (passes/optimizer.h): torch.nn.utils.clip_grad_norm_,
// as a torch loop calls it between backward() and optimizer.step().
//
// Requires: the gradients the update reads (each param's, after autodiff), and the graph
//   attributes `clip_grad_max_norm` (> 0) and `clip_grad_norm_type` (> 0, or inf).
// Guarantees: returns each gradient times clamp(max_norm / (total_norm + 1e-6), max=1), where
//   total_norm is the norm_type-norm of the per-param norms (for inf, the largest |element|),
//   computed by ops appended as torch computes it; the update reads these instead. Under
//   data-parallel the ops read the summed gradients, as torch's clipping after DDP's
//   all-reduce does, so every replica clips by the same norm.
#pragma once

#include <utility>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// `updates`: (param, gradient) pairs; their gradients are replaced by the clipped ones.
void clipGradNorm(Graph& graph, std::vector<std::pair<Value*, Value*>>& updates);

}  // namespace gxc
