// The optimizer pass's gradient accumulation (passes/optimizer.h): a torch loop that calls
// (loss / K).backward() on K micro-batches, then optimizer.step() and zero_grad().
//
// Requires: the gradients the update reads (each param's, after autodiff), and the graph
//   attribute `accumulate` = K >= 2.
// Guarantees: each param gets a gradient buffer NAME.grad_accum (role "optimizer_state", zero
//   at first); each gradient is replaced by buffer + gradient / K, the sum torch's .grad holds
//   after this micro-batch. Returns the bool 0-d value "this micro-batch ends the K": the
//   0-d param `optimizer.apply` (role "optimizer_state"), which the driver writes before each
//   run (1 on every K-th micro-batch, else 0), is above 0.5. The buffers keep the sum when it
//   is false and are zeroed when it is true (zero_grad); the caller makes every other state
//   change of the update conditional on it, so the step runs once per K micro-batches while
//   the graph stays one compiled program.
#pragma once

#include <utility>
#include <vector>

#include "ir/graph.h"

namespace gxc {

// `updates`: (param, gradient) pairs; their gradients are replaced by the accumulated ones.
Value* accumulateGradients(Graph& graph, std::vector<std::pair<Value*, Value*>>& updates);

}  // namespace gxc
