// What `gxc train` records of each step and validation: JSON lines in --log, scalars in
// --tensorboard (docs/cli.md names each key).
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "tools/driver/tensorboard_events.h"
#include "tools/driver/train_validation.h"

namespace gxc {

struct StepScalars {
  int64_t epoch = 0;  // from 1
  int64_t step = 0;   // from 1, over the whole run
  int64_t rows = 0;   // the batch's samples
  double loss = 0;
  double lr = 0;
  double wallSeconds = 0;  // the compiled step's run on this host
  // On virtual GPUs, the step's time on the sim's clock: what a scaling claim is read from,
  // since the host computes every virtual GPU in turn.
  std::optional<double> simulatedMs;
};

// The progress line's report of a step (or micro-batch): its loss and rate, and on virtual GPUs
// the rate on the sim's clock ("loss 0.3125, 5900 samples/s, 360815 per simulated s").
std::string stepStatus(double loss, int64_t rows, double seconds,
                       std::optional<double> simulatedMs);

class StepRecords {
 public:
  // Opens --log and --tensorboard (folders made as --output makes them).
  StepRecords(const std::string& logPath, const std::string& tensorboardDir);
  // `samples_per_second` from the wall time; with a simulated time, `sim_step_ms` and
  // `sim_samples_per_second` too.
  void step(const StepScalars& step);
  // The validation loss (and a classifier's accuracy) after epoch `epoch`, at the step it
  // ended on.
  void validation(int64_t epoch, int64_t step, const ValidationResult& result);
  void endEpoch();
  void finish();  // a failed write of the log is an error

 private:
  std::string logPath_;
  std::optional<std::ofstream> log_;
  std::optional<TensorboardWriter> tensorboard_;
};

}  // namespace gxc
