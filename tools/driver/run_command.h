// `gxc run`: compile, bind inputs, execute, then write outputs, the report and the summary,
// all only once the whole run has succeeded.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda/cuda_platform.h"
#include "runtime/host/host_executor.h"
#include "runtime/sim/sim_executor.h"
#include "tools/driver/compile_session.h"
#include "tools/driver/run_summary.h"

namespace gxc {

struct RunOptions {
  CompileOptions compile;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string outputDir;
  int iterations = 0;  // 0: one plain run; N: one warm-up, then N timed runs
  std::string reportPath;
  std::string tracePath;
  // --emulate-gpu-blocks: generated kernels run every thread of their GPU launch (cpu, sim).
  bool emulateGpuBlocks = false;
};

// The virtual GPUs a compiled model runs on: its --sim-gpus, its devices' order, the cost
// table its passes planned with, and GXC_LAUNCH_BLOCKING.
SimConfig simConfigOf(const CompiledModel& compiled);

// What one run of a graph on the host or on virtual GPUs reports (`train` reports its last
// step so).
RunSummary hostRunSummary(const HostRunStats& stats, const HostExecutor& executor);
RunSummary simRunSummary(const SimRunReport& report, const SimConfig& config,
                         const SimExecutor& executor);

// Real GPUs: a compiled model's GPUs, their capacities as plan-memory had them, and notes to
// `notes`; and what one run on them reports.
CudaRunOptions cudaRunOptionsOf(const CompiledModel& compiled, std::ostream& notes);
RunSummary cudaRunSummary(const CudaRunReport& report, const CompiledModel& compiled,
                          const KernelCacheStats& kernels);

// A model error unless a tensor given for `input` (named `given` by the caller) has its dtype
// and shape; `at` locates what gave it (an --input file; nothing, from Python).
void checkGivenInput(const Value& input, const std::string& given, DType dtype, const Shape& shape,
                     const SourceLoc& at);

// Returns the exit status; results go to `out`, notes and the summary to `err`.
int runModel(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gxc
