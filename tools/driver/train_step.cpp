#include "tools/driver/train_step.h"

#include "tools/driver/run_command.h"

namespace gxc {

StepProgram::StepProgram(CompiledModel compiled, std::ostream* notes)
    : compiled_(std::move(compiled)) {
  if (compiled_.devices.hostOnly()) {
    host_ = std::make_unique<HostExecutor>(*compiled_.graph);
    return;
  }
  if (!compiled_.sim.enabled()) {
    cuda_ = std::make_unique<CudaSession>(*compiled_.graph,
                                          cudaRunOptionsOf(compiled_, notes ? *notes : unsaid_));
    return;
  }
  simConfig_ = simConfigOf(compiled_);
  sim_ = std::make_unique<SimExecutor>(*compiled_.graph, simConfig_);
}

std::map<std::string, Tensor> StepProgram::run(const std::map<std::string, Tensor>& inputs,
                                               StepRecord* record) {
  if (cuda_) {
    CudaRunReport report;
    std::map<std::string, Tensor> outputs = cuda_->run(inputs, record ? &report : nullptr);
    if (record) record->summary = cudaRunSummary(report, compiled_, cuda_->kernelCache());
    return outputs;
  }
  if (host_) {
    InputViews views;
    for (const auto& [name, tensor] : inputs) views.emplace(name, tensor.view());
    return run(views, record);
  }
  // Always reported: the simulated time of every step goes to the log.
  SimRunReport report;
  std::map<std::string, Tensor> outputs = sim_->run(inputs, &report);
  lastSimulatedMs_ = report.totalMs;
  if (!record) return outputs;
  record->summary = simRunSummary(report, simConfig_, *sim_);
  record->trace = report.trace.str();
  return outputs;
}

std::map<std::string, Tensor> StepProgram::run(const InputViews& inputs, StepRecord* record) {
  if (!host_) return run(copiesOf(inputs), record);
  if (!record) return host_->run(inputs);
  HostRunStats stats;
  std::map<std::string, Tensor> outputs = host_->run(inputs, &stats);
  record->summary = hostRunSummary(stats, *host_);
  return outputs;
}

std::map<std::string, Tensor> StepProgram::paramValues() {
  if (cuda_) return cuda_->paramValues();
  return host_ ? host_->paramValues() : sim_->paramValues();
}

void StepProgram::setParamValues(const std::map<std::string, Tensor>& values) {
  if (cuda_)
    cuda_->setParamValues(values);
  else if (host_)
    host_->setParamValues(values);
  else
    sim_->setParamValues(values);
}

void StepProgram::setInterruptCheck(std::function<bool()> interrupted) {
  if (host_) host_->setInterruptCheck(std::move(interrupted));
}

void StepProgram::setStepScalars(std::optional<double> lr, std::optional<bool> apply) {
  std::map<std::string, Tensor> values;
  auto scalar = [&](const std::string& name, double number) {
    const Value* param = compiled_.graph->find(name);
    GXC_CHECK(param, "the training step has no param {}", name);
    Tensor value(param->type.dtype, {});
    value.storeDouble(0, number);
    values.emplace(name, std::move(value));
  };
  if (lr) scalar("optimizer.lr", *lr);
  if (apply) scalar("optimizer.apply", *apply ? 1.0 : 0.0);
  if (!values.empty()) setParamValues(values);
}

TrainingSteps::TrainingSteps(Compile compile, int64_t batch) : compile_(std::move(compile)) {
  current_ = programs_.emplace(batch, compile_(batch)).first->second.get();
}

StepProgram& TrainingSteps::forRows(int64_t rows) {
  auto found = programs_.find(rows);
  if (found == programs_.end()) found = programs_.emplace(rows, compile_(rows)).first;
  StepProgram* program = found->second.get();
  if (program != current_) {  // the other batch size's step goes on from these values
    program->setParamValues(current_->paramValues());
    current_ = program;
  }
  return *program;
}

}  // namespace gxc
