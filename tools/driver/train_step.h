// The compiled training steps of one `gxc train` run: one per batch size (the batch, and the
// last, smaller one of an epoch), each with the executor of its platform (cpu, sim or cuda),
// the params and optimizer state handed from one to the other as the batch size changes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "runtime/cuda/cuda_platform.h"
#include "runtime/host/host_executor.h"
#include "runtime/sim/sim_executor.h"
#include "tools/driver/compile_session.h"
#include "tools/driver/run_summary.h"

namespace gxc {

// What a run of a step reports, for `train --report` and `--trace`: as `gxc run` does.
struct StepRecord {
  RunSummary summary;
  std::string trace;  // Chrome trace JSON, on virtual GPUs
};

// One compiled program and the executor that runs it: a training step, or the forward that
// evaluates the loss on a validation set (train_validation.h).
class StepProgram {
 public:
  // `notes`: where the cuda platform's notes go (stderr), for as long as the program lives;
  // null: nowhere (the training step said them).
  explicit StepProgram(CompiledModel compiled, std::ostream* notes = nullptr);
  const Graph& graph() const { return *compiled_.graph; }
  // With `record`, what the run reports is kept there.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs,
                                    StepRecord* record = nullptr);
  // The same over views of the caller's memory: the host reads them there; GPUs, real or
  // virtual, copy them in.
  std::map<std::string, Tensor> run(const InputViews& inputs, StepRecord* record = nullptr);
  std::map<std::string, Tensor> paramValues();
  void setParamValues(const std::map<std::string, Tensor>& values);
  // On virtual GPUs, the simulated time of the last run, first op to last (the sim's clock,
  // not the host's, which computes every virtual GPU in turn); none on other platforms.
  std::optional<double> lastSimulatedMs() const { return lastSimulatedMs_; }
  // What the next run reads from the driver (passes/optimizer.h): `lr`, the param
  // `optimizer.lr` of a schedule's step; `apply`, the param `optimizer.apply` of an
  // accumulating step (whether this micro-batch ends the K and the update happens).
  void setStepScalars(std::optional<double> lr, std::optional<bool> apply);
  // HostExecutor::setInterruptCheck on the host; virtual and real GPUs finish a run they began.
  void setInterruptCheck(std::function<bool()> interrupted);

 private:
  CompiledModel compiled_;
  std::unique_ptr<HostExecutor> host_;
  SimConfig simConfig_;
  std::unique_ptr<SimExecutor> sim_;
  std::unique_ptr<CudaSession> cuda_;
  std::ostringstream unsaid_;  // the notes of a program given no stream for them
  std::optional<double> lastSimulatedMs_;
};

class TrainingSteps {
 public:
  using Compile = std::function<std::unique_ptr<StepProgram>(int64_t rows)>;
  // Compiles the step of `batch` rows now; another size only when a batch of it comes.
  TrainingSteps(Compile compile, int64_t batch);

  // The step for a batch of `rows`, holding the params and state the last step left.
  StepProgram& forRows(int64_t rows);
  // The step that ran last: where the params are now.
  StepProgram& current() { return *current_; }

 private:
  Compile compile_;
  std::map<int64_t, std::unique_ptr<StepProgram>> programs_;
  StepProgram* current_ = nullptr;
};

}  // namespace gxc
