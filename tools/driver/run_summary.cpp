#include "tools/driver/run_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "target/byte_size.h"

namespace gxc {
namespace {

struct IterationStats {
  double p50 = 0, min = 0;
};

IterationStats iterationStats(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

}  // namespace

void printSummary(const std::string& modelPath, const RunSummary& summary, std::ostream& err) {
  err << fmt::format("gxc: ran {} on {}; {} time {:.3f} ms\n", modelPath, summary.platform,
                     summary.clock, summary.totalMs);
  std::string row = "  {:<8}{:<12}{:>12}{:>13}{:>15}{:>12}{:>12}{:>9}\n";
  err << fmt::format(fmt::runtime(row), "device", "on", "busy", "peak alloc", "peak reserved",
                     "copied in", "copied out", "copies");
  for (const DeviceSummary& device : summary.devices)
    err << fmt::format(
        fmt::runtime(row), device.device, device.backing, fmt::format("{:.3f} ms", device.timeMs),
        formatBytes(device.peakAllocatedBytes), formatBytes(device.peakReservedBytes),
        formatBytes(device.bytesCopiedIn), formatBytes(device.bytesCopiedOut),
        fmt::format("{}/{}", device.copiesIn, device.copiesOut));
  err << fmt::format("  generated kernels: {} compiled, {} from the cache\n",
                     summary.kernelsCompiled, summary.kernelCacheHits);
  if (!summary.iterationMs.empty()) {
    IterationStats stats = iterationStats(summary.iterationMs);
    err << fmt::format("  {} iterations: p50 {:.3f} ms, min {:.3f} ms ({})\n",
                       summary.iterationMs.size(), stats.p50, stats.min, summary.clock);
  }
}

nlohmann::json summaryJson(const RunSummary& summary) {
  nlohmann::json json;
  json["platform"] = summary.platform;
  json["clock"] = summary.clock;
  json["total_ms"] = summary.totalMs;
  json["devices"] = nlohmann::json::array();
  for (const DeviceSummary& device : summary.devices)
    json["devices"].push_back({{"device", device.device},
                               {"on", device.backing},
                               {"time_ms", device.timeMs},
                               {"peak_allocated_bytes", device.peakAllocatedBytes},
                               {"peak_reserved_bytes", device.peakReservedBytes},
                               {"bytes_copied_in", device.bytesCopiedIn},
                               {"bytes_copied_out", device.bytesCopiedOut},
                               {"copies_in", device.copiesIn},
                               {"copies_out", device.copiesOut}});
  json["kernels"] = {{"compiled", summary.kernelsCompiled},
                     {"cache_hits", summary.kernelCacheHits}};
  if (!summary.iterationMs.empty()) {
    IterationStats stats = iterationStats(summary.iterationMs);
    json["iteration_ms"] = {
        {"p50", stats.p50}, {"min", stats.min}, {"iterations", summary.iterationMs.size()}};
  }
  return json;
}

}  // namespace gxc
