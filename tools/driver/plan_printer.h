// `gxc compile --emit plan`: the executable plan of a compiled graph, as text.
//
// What it prints is read from what the executors read: the schedule (runtime/schedule.h:
// streams, issue order, events), the memory plan (runtime/memory_plan.h: arenas, offsets,
// resident values) and the steps (ir/kernel_steps.h), with each generated kernel under the name
// codegen gives it (codegen/cuda_source.h). The format is in docs/ir.md ("The executable
// plan"): one block per device (its arena, its resident params and inputs), then one block
// per stream with its steps in issue order, each with what it runs, the events it waits for,
// the bytes it reads and writes, and the event it records; then the outputs.
// Requires: a graph after the default pipeline (plan-memory and assign-streams).
// Guarantees: the same graph gives the same text.
#pragma once

#include <string>

#include "ir/graph.h"

namespace gxc {

std::string printExecutablePlan(const Graph& graph);

}  // namespace gxc
