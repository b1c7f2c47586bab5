#include "tools/driver/train_records.h"

#include <chrono>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/driver/output_paths.h"

namespace gxc {
namespace {

// TensorBoard's wall time: seconds since the Unix epoch.
double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string stepStatus(double loss, int64_t rows, double seconds,
                       std::optional<double> simulatedMs) {
  std::string status = fmt::format("loss {:.5g}, {:.0f} samples/s", loss,
                                   static_cast<double>(rows) / std::max(seconds, 1e-9));
  if (simulatedMs)
    status += fmt::format(", {:.0f} per simulated s",
                          static_cast<double>(rows) / std::max(*simulatedMs, 1e-9) * 1e3);
  return status;
}

StepRecords::StepRecords(const std::string& logPath, const std::string& tensorboardDir)
    : logPath_(logPath) {
  if (!logPath_.empty()) {
    makeParentDirs("--log", logPath_);
    log_.emplace(logPath_);
    if (!*log_) runtimeError({}, "--log: cannot write {}", logPath_);
  }
  if (!tensorboardDir.empty()) tensorboard_.emplace(tensorboardDir);
}

void StepRecords::step(const StepScalars& step) {
  const double rows = static_cast<double>(step.rows);
  std::vector<std::pair<const char*, double>> scalars{
      {"loss", step.loss},
      {"lr", step.lr},
      {"samples_per_second", rows / std::max(step.wallSeconds, 1e-9)}};
  if (step.simulatedMs) {
    scalars.emplace_back("sim_step_ms", *step.simulatedMs);
    scalars.emplace_back("sim_samples_per_second", rows / std::max(*step.simulatedMs, 1e-9) * 1e3);
  }
  if (log_) {
    nlohmann::json line{{"epoch", step.epoch}, {"step", step.step}};
    for (const auto& [key, value] : scalars) line[key] = value;
    *log_ << line.dump() << "\n";
  }
  if (!tensorboard_) return;
  double now = unixSeconds();
  for (const auto& [key, value] : scalars) tensorboard_->addScalar(key, value, step.step, now);
}

void StepRecords::validation(int64_t epoch, int64_t step, const ValidationResult& result) {
  nlohmann::json line{{"epoch", epoch}, {"step", step}, {"val_loss", result.loss}};
  if (result.accuracy) line["val_accuracy"] = *result.accuracy;
  if (log_) *log_ << line.dump() << "\n";
  if (!tensorboard_) return;
  tensorboard_->addScalar("val_loss", result.loss, step, unixSeconds());
  if (result.accuracy)
    tensorboard_->addScalar("val_accuracy", *result.accuracy, step, unixSeconds());
}

void StepRecords::endEpoch() {
  if (tensorboard_) tensorboard_->flush();
  if (log_) log_->flush();
}

void StepRecords::finish() {
  endEpoch();
  if (log_ && !*log_) runtimeError({}, "--log: cannot write {}", logPath_);
}

}  // namespace gxc
