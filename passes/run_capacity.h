// The first memory check of a compile: do the model's params fit the run's devices at all?
//
// assign-devices calls it before it resolves a single device. A model whose params alone
// exceed the memory of every device of the run together cannot be placed by any placement,
// split or not; reporting that first tells the user the real problem, where resolving the
// model's annotations would complain of a missing cuda:1 and hide it. The message has
// plan-memory's form: what is needed, what the devices have, the largest tensors.
#pragma once

#include "ir/graph.h"
#include "passes/pass.h"

namespace gxc {

// Throws a model error (exit 1) when the params, each counted once (replicas of one param are
// one tensor; a shard counts its slice), need more bytes than the run's devices have in all.
// Does nothing when a device of the run has no limit (the host) or no memory is known.
void refuseParamsBeyondRunMemory(const Graph& graph, const PassContext& context);

}  // namespace gxc
