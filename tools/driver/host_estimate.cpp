#include "tools/driver/host_estimate.h"

#include <fmt/format.h>

#include "target/cost_model.h"

namespace gxc {
namespace {

// "80 TFLOP", "2.5 TFLOP", "120 GFLOP": two significant figures at most.
std::string formatFlops(double flops) {
  bool tera = flops >= 1e12;
  double value = flops / (tera ? 1e12 : 1e9);
  return fmt::format("{:.{}f} {}FLOP", value, value < 10 ? 1 : 0, tera ? "T" : "G");
}

// "about 40 s", "about 9 min", "about 2.5 h".
std::string formatEstimate(double seconds) {
  if (seconds < 90) return fmt::format("about {:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("about {:.0f} min", seconds / 60);
  return fmt::format("about {:.1f} h", seconds / 3600);
}

}  // namespace

HostRunEstimate estimateHostRun(const Graph& graph) {
  HostRunEstimate estimate;
  for (const Op* op : graph.ops()) {
    if (op->kind == OpKind::Param || op->kind == OpKind::Copy) continue;
    estimate.seconds += simOpSeconds(*op, Device::cpu());
    estimate.flops += gemmFlops(*op) + convFlops(*op);
  }
  return estimate;
}

std::optional<std::string> hostRunAnnouncement(const HostRunEstimate& estimate) {
  if (estimate.seconds <= kAnnounceHostRunSeconds) return std::nullopt;
  if (estimate.flops < 1e9) return fmt::format("{} on the host", formatEstimate(estimate.seconds));
  return fmt::format("{} on the host ({})", formatEstimate(estimate.seconds),
                     formatFlops(estimate.flops));
}

}  // namespace gxc
