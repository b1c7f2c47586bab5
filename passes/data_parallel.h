// data-parallel: the whole model replicated on every device of the run, each replica on its
// share of the batch, as torch.nn.DataParallel runs a module.
//
// Active only when the run's placement is "data-parallel" (`--placement data-parallel`); under
// any other placement it changes nothing.
//
// Requires: every value typed (after infer-shapes); no device decided yet by a pass (it runs
//   before assign-devices); no `copy` op yet.
// Guarantees, on a run of k >= 2 devices:
//   - dim 0 of every graph input of rank >= 1 is cut as torch.chunk(input, k) cuts it: chunks
//     of ceil(n / k) rows, the last one smaller (130 over 4: 33, 33, 33, 31), and when n is
//     small fewer than k chunks (5 over 4: 2, 2, 1), the last devices then getting none; the
//     chunks are `slice` ops on the host named INPUT.shardI, I being the device's index;
//   - every op that treats dim 0 of its batched operands row by row (the *row-wise* ops,
//     listed in the .cpp) runs once per chunk, on that chunk's device, as NAME.shardI;
//   - a reduction over the batch (sum, mean or max over axis 0 or all axes; mse_loss and
//     cross_entropy with reduction mean or sum, with or without class weights) is a partial
//     sum (or max) per chunk combined exactly on the first device: the single-device answer,
//     never a mean of means; the combined value keeps the layer's name;
//   - an op that is not row-wise reads its batched operands whole (gathered: concat along 0
//     on the first device, under the operand's own name) and runs once on the first device,
//     as does everything that depends on it and nothing batched;
//   - batched outputs are gathered on the first device; outputs keep their names;
//   - every edge between devices is an explicit `to` named VALUE.cudaN, one per value and
//     device (the scatter of the chunks, the gathers, values of the first device read by the
//     replicas): the placement asked for them, so --strict lets them through;
//   - every op carries its device in its type; params and the model's device annotations are
//     left unplaced (one note says the annotations were ignored), so assign-devices gives
//     every device that uses a param its own replica; graph inputs are on the host;
//   - the graph carries the attribute `data_parallel = k`;
//   - --explain (context.explain) gets one line per layer of the model: where it runs and
//     its role in the split (a shard per device, a batch reduction, once on the gathered
//     batch); the ops the split made are not layers and get none (assign-devices, which
//     explains the placement of other graphs, leaves a data-parallel one to this pass).
//   With one device (a host-only run, or one GPU) there is nothing to split: the computation
//   is left as it is and only the annotations are dropped (with the note), so a model without
//   annotations comes out unchanged.
// Idempotent: yes; a graph with the `data_parallel` attribute is left alone.
#pragma once

#include "passes/pass.h"

namespace gxc {

class DataParallelPass : public Pass {
 public:
  std::string_view name() const override { return "data-parallel"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
