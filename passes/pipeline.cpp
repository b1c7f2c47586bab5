#include "passes/pipeline.h"

#include <algorithm>

namespace gxc {

std::vector<std::string> defaultPipeline() {
  std::vector<std::string> passes;
  // Types first: placement weighs tensor sizes, and every later pass reads shapes. The
  // frontend already types what it lowers; this re-checks IR that came in as text.
  passes.push_back("infer-shapes");
  // --placement data-parallel rewrites the graph into per-device replicas before any placement.
  passes.push_back("data-parallel");
  // --placement pipeline cuts stages and micro-batches, also before assign-devices, which then
  // places what it left free (params, with the stages that read them).
  passes.push_back("pipeline-stages");
  // Then devices, from the annotations and the run's device list.
  passes.push_back("assign-devices");
  // A weight that fits no single device is split across devices: it needs devices, and
  // creates edges between them.
  passes.push_back("split-layers");
  // Every edge between devices becomes an explicit copy, once all placement is final.
  passes.push_back("insert-copies");
  // Copies that move together become one: once all copies exist, before memory and streams.
  passes.push_back("batch-transfers");
  // Kernels once every copy is final (copies are never fused and mark device boundaries),
  // before memory: a kernel's inner values get no buffer, and its members move together.
  passes.push_back("fuse");
  // Memory once every buffer (copies too) and the op order are final, before streams.
  passes.push_back("plan-memory");
  // Last, streams and events: they order the final list of ops, so nothing may move after.
  passes.push_back("assign-streams");
  return passes;
}

std::vector<std::string> trainingPipeline() {
  std::vector<std::string> passes = defaultPipeline();
  // The backward and the update are graph before assign-devices, so that every later pass
  // sees the whole training step as one graph; and after data-parallel and pipeline-stages,
  // which split the forward's batch and combine its loss exactly: the backward of the split
  // forward is then the split backward, each op's gradients on its device, the shards'
  // gradients of a param they share summed, and one update.
  auto placement = std::find(passes.begin(), passes.end(), "assign-devices");
  // Under data-parallel, every replica then gets the update and the summed gradients
  // (DDP's layout), while the params and the update are still free to place.
  passes.insert(placement, {"autodiff", "optimizer", "replicate-update"});
  // The forward as model.train() runs it (batch statistics, dropout masks), before
  // data-parallel and pipeline-stages split the batch, which combine its statistics exactly.
  passes.insert(std::find(passes.begin(), passes.end(), "data-parallel"), "train-mode");
  // Mixed precision (train: autocast) before it: the casts are then split, trained through
  // and placed as any other op.
  passes.insert(std::find(passes.begin(), passes.end(), "train-mode"), "autocast");
  return passes;
}

}  // namespace gxc
