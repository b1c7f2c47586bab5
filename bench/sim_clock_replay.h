// The sim executor's clock without its arithmetic, for the benchmarks on virtual GPUs.
//
// The sim platform computes for real on the host (gxc's generated kernels, OpenBLAS GEMMs),
// which would take minutes at the sizes the benchmarks measure. So they replay the clock
// SimExecutor::issue keeps over a compiled schedule (an op starts when its stream is free and the
// events it waits for are recorded, and lasts what the cost model says) and check on a model small
// enough to run that the replay still equals SimRunReport::totalMs. Each bench keeps only what it
// reads off the per-op times (the scatter's end, the GEMMs' span, ...).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "ir/kernel_steps.h"
#include "runtime/sim/sim_executor.h"
#include "target/cost_model.h"
#include "tensor/tensor.h"

namespace gxc {

// One scheduled op on the replayed clock, in seconds from the start of the run.
struct ReplayedOp {
  const Op& op;
  double start = 0;
  double end = 0;
  // The kernel this op launches, being its root; null for an internal member of a fused
  // kernel (which only holds its stream for its waits) and for a copy.
  const KernelStep* launch = nullptr;
  std::optional<CopyDirection> copy;  // set for a copy
};

// Replays the clock over `scheduled` (a graph through the default pipeline, assign-streams
// included) with the default SimConfig's costs and staging, calling `visit` per op in issue
// order; returns the run's end, in seconds.
double replaySimClock(const Graph& scheduled,
                      const std::function<void(const ReplayedOp&)>& visit = {});

// Throws unless the replay of `scheduled` ends at the real run's SimRunReport::totalMs: the
// bench's figures are only the sim's while the two agree.
void checkReplayMatchesSim(const Graph& scheduled, const SimRunReport& report);
// Runs `scheduled` on `gpus` virtual GPUs with the model's default inputs, checks that the
// replay is the sim's clock, and returns the outputs.
std::map<std::string, Tensor> runCheckingReplay(const Graph& scheduled, int gpus);

// Whether `got` equals `want` within the relative tolerance of float arithmetic done in another
// order (a batch split across GPUs or micro-batches).
bool closeTo(const Tensor& got, const Tensor& want);

// main() of a bench: runs `benchMain`, and turns an exception into one line `NAME: what` on
// stderr and exit status 1.
int runBench(const char* name, int (*benchMain)(int, char**), int argc, char** argv);

}  // namespace gxc
