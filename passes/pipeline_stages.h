// pipeline-stages: the layers cut into one contiguous stage per device, and the batch into
// micro-batches that flow through the stages, as GPipe runs its forward pass.
//
// Active only when the run's placement is "pipeline" (`--placement pipeline`); under any
// other placement it changes nothing.
//
// Requires: every value typed (after infer-shapes); no `copy` op yet; no device decided by a
//   pass (it runs before assign-devices).
// Guarantees, on a run of k >= 2 GPUs with M micro-batches (context.microbatches, or k when
//   0):
//   - every layer (non-param op) of the model sits on the device of its stage; stage i runs
//     on the run's device i, its layers are a contiguous run in program order, and the cut
//     minimizes the slowest stage by the sim cost model, with each stage's params and working
//     set within its device's memory when the run gives memory sizes; a trailing device gets
//     no stage when fewer stages are as fast;
//   - the model's device annotations are constraints: a layer placed on cuda:i is in stage i;
//     annotations out of program order, on cuda:N beyond the run, or on the host are errors
//     naming the layer; annotated params stay put, free params stay free (assign-devices puts
//     each with the stages that read it);
//   - with M >= 2, dim 0 of every graph input is cut into micro-batches as torch.chunk cuts
//     it, and the row-wise layers run once per micro-batch as NAME.mbI, on their stage's
//     device; batch reductions are combined exactly and values read whole are concatenated
//     (splitBatch, the rules data-parallel uses); an input with fewer rows than M is an error,
//     and fewer micro-batches than M (torch.chunk's rounding) is said in a note;
//   - ops are in micro-batch-major order: all of micro-batch 0, then all of 1, ..., so each
//     stage's stream runs mb0, mb1, ... and stage i+1 works on micro-batch j while stage i
//     works on j+1;
//   - every hand-off between stages is an explicit `to` named VALUE.cudaN, so --strict lets
//     it through;
//   - the graph carries `pipeline_stages = S` (stages with layers) and `microbatches = M`.
//   With one device there is one stage: annotations are left for assign-devices, and only
//   the micro-batching is done.
// --explain gets one line per stage: its device, its layers and its time.
// Idempotent: yes; a graph with the `pipeline_stages` attribute is left alone.
#pragma once

#include "passes/pass.h"

namespace gxc {

class PipelineStagesPass : public Pass {
 public:
  std::string_view name() const override { return "pipeline-stages"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
