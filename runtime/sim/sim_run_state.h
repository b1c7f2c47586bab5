// SimExecutor's bookkeeping for one run (private to the sim_executor*.cpp and sim_run_state.cpp):
// the run's inputs, the simulated clock of each stream and time of each event, the trace, and
// the per-device counters the report is made of.
//
// Requires: used only on the thread that calls SimExecutor::run; stream threads never see
// it (tasks get views of the bytes they read and write, not the state).
// Guarantees: the clock and the counters depend only on the schedule and the cost model,
// never on how the stream threads happen to interleave.
#pragma once

#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runtime/sim/sim_executor.h"

namespace gxc {

// What a stream task throws: the op that failed (by issue index) and what it threw, so the
// error can be attributed to where it happened, not to the stream that reported it.
class KernelFailure : public std::runtime_error {
 public:
  KernelFailure(size_t opIndex, std::exception_ptr original)
      : std::runtime_error("sim kernel failure"), opIndex(opIndex), original(std::move(original)) {}
  size_t opIndex;
  std::exception_ptr original;
};

struct SimExecutor::RunState {
  // A graph input's memory for this run: the caller's tensor on the host, an uploaded copy
  // on a GPU; allocated from its device's allocator until the run ends.
  struct Input {
    Tensor uploaded;
    ConstTensorView data;
    CachingAllocator* allocator = nullptr;
    CachingAllocator::Block block;
  };

  RunState(const Schedule& schedule, const std::vector<int>& deviceMap);

  SimDeviceReport& device(const Device& device);
  // Books op `index`, the root of `step`, which runs for `seconds` from `startSeconds`: one
  // span in the trace for the whole step (with arrows from the ops whose events it waits
  // for, `kernelWaits`), its device's busy span, kernels and copies.
  void account(const Schedule& schedule, size_t index, double startSeconds, double seconds,
               const KernelStep& step);
  void fillReport(SimRunReport& report, const SimExecutor& executor);

  std::map<const Value*, Input> inputs;
  std::vector<double> streamClock;  // seconds; by Schedule::streams index
  std::map<int64_t, double> eventTime;
  std::map<int64_t, size_t> eventSpan;   // the trace span of the op that records it
  std::vector<int64_t> kernelWaits;      // the waits of the fused kernel being issued
  std::vector<SimDeviceReport> devices;  // cpu, cuda:0, cuda:1, ...
  // Per device (as `devices`), the [start, end) of every op and copy on its streams, in
  // seconds: its busy time is their union.
  std::vector<std::vector<std::pair<double, double>>> spans;
  ChromeTrace trace;
};

}  // namespace gxc
