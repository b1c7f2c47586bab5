// How long a run on the host should take, by the cost model (target/cost_model.h): the sum of
// simOpSeconds on the host over the graph's ops, and their GEMM flops. `gxc run` announces a
// run expected to take more than a few seconds before it starts, on a terminal only:
// "about 9 min on the host (80 TFLOP)".
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"

namespace gxc {

struct HostRunEstimate {
  double seconds = 0;
  double flops = 0;
};

// Requires every op typed (a compiled graph).
HostRunEstimate estimateHostRun(const Graph& graph);

// A run worth announcing takes longer than this.
constexpr double kAnnounceHostRunSeconds = 5;

// "about 9 min on the host (80 TFLOP)" (without the flops when GEMMs do under a GFLOP), or
// nullopt for a run expected to take at most kAnnounceHostRunSeconds.
std::optional<std::string> hostRunAnnouncement(const HostRunEstimate& estimate);

}  // namespace gxc
