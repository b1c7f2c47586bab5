// The stage cut of pipeline-stages: layers in program order split into contiguous stages,
// the slowest stage as fast as it can be, each stage within its device's memory.
//
// Algorithm: the bottleneck (the time of the slowest stage) is found by bisection between
// the slowest layer and the sum of all layers. For a candidate bottleneck, a greedy sweep
// fills stage 0 with layers while its time stays within the bottleneck and its memory within
// the device's, then stage 1, ...; a layer that must be in a given stage (an annotation)
// moves the sweep to that stage, and one whose stage has passed makes the candidate fail.
// Taking each layer as early as possible is optimal for such sweeps (any feasible cut puts
// the end of every stage no further than the greedy one), so the cut found is the best one
// with at most k stages: O(n) per candidate, 64 bisection steps.
//
// A stage's memory is the bytes of the params its layers read (each once) plus the working
// set of its largest layer (its activations in and out, for the whole batch): an estimate
// made before buffers are planned; plan-memory computes the exact peak later.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace gxc {

struct StageLayer {
  double seconds = 0;                // the sim cost model's time for the whole batch
  std::vector<const Value*> params;  // params it reads
  int64_t workingBytes = 0;          // its activation operands and result
  int requiredStage = -1;            // the stage an annotation asks for, or -1
};

struct StageCut {
  std::vector<size_t> stageOf;  // per layer
  double bottleneckSeconds = 0;
  bool fitsMemory = true;  // false: no cut fits; this one ignores memory
};

// `capacityBytes[i]` is the memory of stage i's device (0: unlimited). Empty when the
// annotations cannot be met by any cut in program order (the caller names the layer).
std::optional<StageCut> cutStages(const std::vector<StageLayer>& layers,
                                  const std::vector<int64_t>& capacityBytes);

}  // namespace gxc
