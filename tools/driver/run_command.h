// `gxc run`: compile, bind inputs, execute, then write outputs, the report and the summary,
// all only once the whole run has succeeded.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "runtime/sim/sim_executor.h"
#include "tools/driver/compile_session.h"

namespace gxc {

struct RunOptions {
  CompileOptions compile;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string outputDir;
  int iterations = 0;  // 0: one plain run; N: one warm-up, then N timed runs
  std::string reportPath;
  std::string tracePath;
};

// The virtual GPUs a compiled model runs on: its --sim-gpus, its devices' order, the cost
// table its passes planned with, and GXC_LAUNCH_BLOCKING.
SimConfig simConfigOf(const CompiledModel& compiled);

// Returns the exit status; results go to `out`, notes and the summary to `err`.
int runModel(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gxc
