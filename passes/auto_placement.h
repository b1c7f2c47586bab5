// The `auto` phase of assign-devices: a memory-aware list scheduler decides the device of
// every layer the model left free.
//
// Terms. A *constraint* is a device the model gave a layer (its own `device`, a group's, or
// `default_device`); `auto` never moves one. The *candidates* of a free layer are the run's
// devices and the host: the host is always there, and a copy can cost more than it saves.
//
// Algorithm: HEFT's processor selection (Topcuoglu et al., 2002) with the memory constraint
// of Baechi's m-ETF (Jeon et al., SoCC 2020). Layers are taken in program order (a
// topological order, so it is linear in the graph's size); each goes to the candidate where
// it would finish first: when that device is free, after its inputs arrive (the producer's
// finish, plus a copy when the producer sits elsewhere), plus its own time. Times come from
// the sim platform's cost table (target/cost_model.h): a GEMM by its shape and dtype, never
// faster than its operands cross HBM, everything else by memory traffic, 5 us per launch, a
// fixed dispatch per op on the host, and a copy to or from the host as the runtimes' staging
// runs it (a host memcpy beside each DMA). A candidate is allowed only if its memory still holds
// what the layer adds: the params it reads that are not there yet (a free param goes with its
// consumers) and its result, with activations freed after their last reader. When no candidate has
// room, the layer goes where the most memory is free, and plan-memory will say whether the plan
// fits.
//
// Requires: every value typed; context.devices the run's devices.
// Guarantees: every non-param op is placed; free params stay free (assign-devices replicates
// them per consuming device); with --explain, `reasons` gets one line per layer saying why.
#pragma once

#include <string>
#include <unordered_map>

#include "passes/pass.h"

namespace gxc {

// Places every unconstrained layer; returns whether anything moved. With context.explain,
// `reasons` (by layer name) says for each layer: its constraint, or the cost or memory that
// decided; without, it stays empty (formatting a reason per layer is not free).
bool placeAutomatically(Graph& graph, const PassContext& context,
                        std::unordered_map<std::string, std::string>& reasons);

}  // namespace gxc
