// batch-transfers: copies between one pair of devices that can move at the same point become
// one transfer of one contiguous buffer.
//
// Requires: every operand on its op's device, every edge an explicit `copy` (after
//   insert-copies); types inferred; ops and buffers not yet final (before plan-memory and
//   assign-streams: it adds both).
// Guarantees:
//   - copies of one dtype from one device to another whose sources are all ready when the
//     earliest of their consumers may start (it already waits for each of them, directly or
//     through its streams' order) move as one batch: on the source device the values are
//     packed by `concat` (flattened first by `reshape` when their shapes differ beyond dim 0)
//     into `%batchN`, one `copy` moves it (`%batchN.cuda0`), and on the destination `slice`
//     (and `reshape`) unpack each piece right before that earliest consumer, under the name
//     of the copy it replaces (`%a.cuda0`), so every later op reads the same names as before;
//   - a batch has at least two copies; a copy larger than what one saved copy latency pays
//     for by the context's cost table (with the H100 table about 1.6 KiB toward a GPU,
//     17 KiB toward the host, 1.4 MiB over NVLink; see the .cpp) moves alone;
//   - the batch point waits for no source it did not wait for before, so the micro-batches
//     of a pipeline are never glued together.
// Idempotent: yes: it batches until nothing more can be, and never batches a copy it made.
#pragma once

#include <cstdint>

#include "passes/pass.h"
#include "target/cost_model.h"

namespace gxc {

class BatchTransfersPass : public Pass {
 public:
  std::string_view name() const override { return "batch-transfers"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

// The largest copy worth carrying in a batch between these devices, in bytes, by `costs`.
int64_t maxBatchedCopyBytes(const Device& from, const Device& to, const CostTable& costs);

}  // namespace gxc
