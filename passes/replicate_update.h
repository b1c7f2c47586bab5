// replicate-update: under data-parallel training, every replica applies the update, as
// PyTorch's DistributedDataParallel does.
//
// Requires: a graph after data-parallel, autodiff and optimizer, before assign-devices: the
//   forward and backward placed on the shards' devices (each param's gradient summed on the
//   first device, shard by shard as the backward finishes it), the update ops and the params
//   still unplaced.
// Guarantees: when the graph is split over K >= 2 devices (`data_parallel = K`) and has an
//   update (unplaced ops other than params):
//   - the update runs on the first device, and a copy of it (`%update.fc1.weight.cuda1`) on
//     every other device whose shards read a param it updates, each copy on its own replicas
//     of the params and of the optimizer's state (`%fc1.weight.cuda1`, the same `name`, so
//     loaded and initialized identically); that device's shards read those replicas, so no
//     param is sent anywhere; each copy runs its ops in the order their gradients arrive
//     (the last layers' first), each gradient unpacked right before its first reader;
//   - the summed gradients (whatever the update reads from the backward) reach the other
//     devices in buckets (`%ddp.bucket0`: a `concat` of the flattened gradients on the first
//     device, one `to` per device, `slice` and `reshape` there), cut in the order the backward
//     finishes them, each at most `context.bucketBytes` (or one gradient, if larger) and at
//     most kMaxKernelArgs - 1 gradients (what the packing kernel can be passed), each
//     sent as soon as its last gradient is summed: the transfer overlaps the rest of the
//     backward. A cap larger than every gradient together makes one bucket, sent after the
//     whole backward: no overlap.
//   Every replica computes the same update from the same bits, so the replicas stay equal to
//   the bit, and equal to one device's training.
// Idempotent: yes: the update it leaves is placed.
#pragma once

#include "passes/pass.h"

namespace gxc {

class ReplicateUpdatePass : public Pass {
 public:
  std::string_view name() const override { return "replicate-update"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
