#include "tools/driver/train_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace gxc {
namespace {

// torch's OneCycleLR anneals each phase from `start` to `end` over pct in [0, 1].
double anneal(const std::string& strategy, double start, double end, double pct) {
  if (strategy == "linear") return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
}

// OneCycleLR.get_lr at step t: its phases end at (fractional) steps as torch computes them.
double oneCycleAt(const Attrs& o, int64_t t) {
  double maxLr = o.getFloat("max_lr", 0);
  double initialLr = maxLr / o.getFloat("div_factor", 25);
  double minLr = initialLr / o.getFloat("final_div_factor", 1e4);
  double total = static_cast<double>(o.getInt("total_steps", 1));
  double pct = o.getFloat("pct_start", 0.3);
  struct Phase {
    double endStep, start, end;
  };
  std::vector<Phase> phases;
  if (o.getBool("three_phase", false))
    phases = {{pct * total - 1, initialLr, maxLr},
              {2 * pct * total - 2, maxLr, initialLr},
              {total - 1, initialLr, minLr}};
  else
    phases = {{pct * total - 1, initialLr, maxLr}, {total - 1, maxLr, minLr}};
  std::string strategy = o.getString("anneal_strategy", "cos");
  double step = static_cast<double>(t);
  double startStep = 0;
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& phase = phases[i];
    if (step <= phase.endStep || i + 1 == phases.size()) {
      double length = phase.endStep - startStep;
      // A phase of no length (torch divides by zero there) is at its end.
      double fraction = length == 0 ? 1.0 : (step - startStep) / length;
      return anneal(strategy, phase.start, phase.end, fraction);
    }
    startStep = phase.endStep;
  }
  return minLr;
}

}  // namespace

std::optional<LrSchedule> LrSchedule::fromAttrs(const Attrs& attrs, const std::string& modelPath) {
  if (!attrs.has("lr_schedule")) return std::nullopt;
  LrSchedule schedule;
  schedule.perEpoch_ = attrs.getString("lr_schedule", "step") == "epoch";
  int64_t count = attrs.getInt("lr_schedule.count", 1);
  for (int64_t i = 0; i < count; ++i) {
    std::string prefix = fmt::format("lr_schedule.{}", i);
    Part part;
    part.kind = attrs.getString(prefix, "");
    part.loc = SourceLoc(modelPath, static_cast<int>(attrs.getInt(prefix + ".line", 0)),
                         static_cast<int>(attrs.getInt(prefix + ".col", 0)));
    for (const auto& [name, value] : attrs.all())
      if (name.size() > prefix.size() + 1 && name.compare(0, prefix.size() + 1, prefix + ".") == 0)
        part.options.set(name.substr(prefix.size() + 1), value);
    schedule.parts_.push_back(std::move(part));
  }
  schedule.milestones_ =
      attrs.getIntList("lr_schedule.milestones").value_or(std::vector<int64_t>{});
  return schedule;
}

double LrSchedule::partAt(const Part& part, double baseLr, int64_t t) {
  const Attrs& o = part.options;
  if (part.kind == "step_lr")
    return baseLr *
           std::pow(o.getFloat("gamma", 0.1), static_cast<double>(t / o.getInt("step_size", 1)));
  if (part.kind == "cosine_annealing_lr") {
    double etaMin = o.getFloat("eta_min", 0);
    double tMax = static_cast<double>(o.getInt("T_max", 1));
    return etaMin +
           (baseLr - etaMin) * (1 + std::cos(std::numbers::pi * static_cast<double>(t) / tMax)) / 2;
  }
  if (part.kind == "linear_lr") {
    double start = o.getFloat("start_factor", 1.0 / 3), end = o.getFloat("end_factor", 1.0);
    int64_t iters = o.getInt("total_iters", 5);
    return baseLr * (start + (end - start) * static_cast<double>(std::min(t, iters)) /
                                 static_cast<double>(iters));
  }
  return oneCycleAt(o, t);
}

double LrSchedule::at(double baseLr, int64_t t) const {
  // sequential_lr: the part whose milestone t has reached, restarted from 0 there (torch's
  // SequentialLR calls its step(0)).
  size_t index = std::upper_bound(milestones_.begin(), milestones_.end(), t) - milestones_.begin();
  int64_t begun = index == 0 ? 0 : milestones_[index - 1];
  return partAt(parts_.at(index), baseLr, t - begun);
}

void LrSchedule::checkLength(int64_t count) const {
  const Part& part = parts_.front();
  if (part.kind != "one_cycle_lr") return;
  int64_t total = part.options.getInt("total_steps", 1);
  if (count > total)
    throw Error(ErrorKind::Model, part.loc,
                fmt::format("train: schedule: one_cycle_lr: total_steps is {}, but the training "
                            "takes {} {} (torch's OneCycleLR refuses to step past total_steps)",
                            total, count, perEpoch_ ? "epochs" : "steps"));
}

}  // namespace gxc
