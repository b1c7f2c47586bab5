#include "bench/sim_clock_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <vector>

#include "runtime/param_init.h"
#include "runtime/schedule.h"

namespace gxc {

double replaySimClock(const Graph& scheduled, const std::function<void(const ReplayedOp&)>& visit) {
  const SimConfig config;
  Schedule schedule = readSchedule(scheduled);
  KernelSteps steps(scheduled);  // a fused kernel is one launch, timed at its root
  std::vector<double> streamClock(schedule.streams.size(), 0.0);
  std::map<int64_t, double> eventTime;
  double runEnd = 0;
  for (const ScheduledOp& scheduledOp : schedule.ops) {
    const Op& op = *scheduledOp.op;
    ReplayedOp replayed{op, streamClock[scheduledOp.stream], 0, nullptr, std::nullopt};
    for (int64_t event : scheduledOp.waits)
      replayed.start = std::max(replayed.start, eventTime.at(event));
    double seconds = 0;
    if (op.kind == OpKind::Copy) {
      replayed.copy = copyDirection(op.operands[0]->type.device, op.device());
      seconds = simStagedCopySeconds(*replayed.copy, op.result->type.bytes(),
                                     config.stagingChunkBytes, config.costs);
    } else if (steps.stepOf(&op).root() == &op) {
      replayed.launch = &steps.stepOf(&op);
      seconds = simStepSeconds(*replayed.launch, op.device(), config.costs);
    }
    replayed.end = replayed.start + seconds;
    streamClock[scheduledOp.stream] = replayed.end;
    if (scheduledOp.record) eventTime[*scheduledOp.record] = replayed.end;
    runEnd = std::max(runEnd, replayed.end);
    if (visit) visit(replayed);
  }
  return runEnd;
}

void checkReplayMatchesSim(const Graph& scheduled, const SimRunReport& report) {
  if (std::abs(replaySimClock(scheduled) * 1e3 - report.totalMs) > 1e-9)
    throw std::runtime_error("the bench's clock no longer matches the sim executor's");
}

bool closeTo(const Tensor& got, const Tensor& want) {
  if (got.numel() != want.numel()) return false;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::abs(got.loadFloat(i) - want.loadFloat(i)) >
        1e-5 * std::max(1.0f, std::abs(want.loadFloat(i))))
      return false;
  return true;
}

int runBench(const char* name, int (*benchMain)(int, char**), int argc, char** argv) {
  try {
    return benchMain(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", name, error.what());
    return 1;
  }
}

std::map<std::string, Tensor> runCheckingReplay(const Graph& scheduled, int gpus) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : scheduled.inputs())
    inputs[input->name] = defaultInput(scheduled, *input, 0);
  SimConfig config;
  config.gpus = gpus;
  SimRunReport report;
  std::map<std::string, Tensor> outputs = SimExecutor(scheduled, config).run(inputs, &report);
  checkReplayMatchesSim(scheduled, report);
  return outputs;
}

}  // namespace gxc
