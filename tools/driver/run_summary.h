// What a run reports, whatever the platform: per device time, peak memory allocated and
// reserved, bytes and copies in and out (cli.md), printed as the summary on stderr and
// written as --report JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gxc {

struct DeviceSummary {
  std::string device;   // "cpu", "cuda:0"
  std::string backing;  // what runs it: "host", "sim GPU 1"
  // Its time, never more than totalMs: on sim, when at least one of its streams ran
  // something (the union of their spans); on real GPUs, from its start to its last stream's
  // end; on the host, the run's wall time.
  double timeMs = 0;
  int64_t peakAllocatedBytes = 0;
  int64_t peakReservedBytes = 0;
  int64_t bytesCopiedIn = 0;
  int64_t bytesCopiedOut = 0;
  int64_t copiesIn = 0;
  int64_t copiesOut = 0;
};

struct RunSummary {
  std::string platform;  // "cpu" or "sim"
  std::string clock;     // "wall" or "simulated (H100 cost model)"
  double totalMs = 0;    // the last run, start to end
  std::vector<DeviceSummary> devices;
  std::vector<double> iterationMs;  // with --iterations: each timed run's total
  // The host build of the generated kernels: builds run, and builds found in the cache.
  int kernelsCompiled = 0;
  int kernelCacheHits = 0;
};

void printSummary(const std::string& modelPath, const RunSummary& summary, std::ostream& err);
nlohmann::json summaryJson(const RunSummary& summary);

}  // namespace gxc
