// split-layers: a matmul or linear whose weight fits no single device is split inside the
// layer into weight shards on several GPUs, with the ops that combine their results.
//
// Requires: every value typed and placed (after assign-devices), no copies yet (before
//   insert-copies: the shards create edges between devices that it turns into copies).
// Guarantees: with the target's memory known (otherwise the pass does nothing),
//   every matmul or linear whose weight, with the params resident on its device and the
//   layer's own operands and result, exceeds its device's memory is split into K shards on K
//   distinct GPUs of the run, K the smallest count that fits:
//   - `%L.shardI` computes the layer on a param shard `%W.shardI` (ir/param_shard.h) and
//     carries `shard_of = "L"`;
//   - an output split cuts the weight's output rows (or columns) and the layer, under its
//     own name, device and location, becomes the `concat` of the shards; a reduction split
//     cuts the weight along the reduction dim and the activation by `slice` ops on its
//     device, and the layer becomes the sum of the partial results (`%L.sumI` adds, the last
//     one named L); a linear's bias is added once, after the combine (`%L.nobias`);
//   - the transfers the split makes (a shard's result to the layer's device, and the layer's
//     operand from its device to a shard's) are `to` ops named VALUE.DEVICE, which
//     insert-copies lowers and --strict accepts; an operand the layer already read from
//     another device stays a plain edge, which --strict refuses as it did before the split;
//   - the whole weight param is gone: nothing materializes it.
//   A layer that fits no way on the run's GPUs is a model error naming it, its weight and
//   the room left on each GPU (exit 1). The rest of memory is plan-memory's to judge.
//   With --explain, one line per split layer: its shards and why.
// Idempotent: yes; shards (`shard_of`) and param shards are never split again.
#pragma once

#include "passes/pass.h"

namespace gxc {

class SplitLayersPass : public Pass {
 public:
  std::string_view name() const override { return "split-layers"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
