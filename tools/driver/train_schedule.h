// The learning-rate schedule of a `gxc train` run: the `lr_schedule*` attributes the model's
// `train: schedule:` left in the graph (frontend/train_schedule.cpp), evaluated as
// torch.optim.lr_scheduler's closed forms. The value at `t` is the lr of the step taken after t
// calls of torch's scheduler.step(): t counts optimizer steps (interval: step) or epochs
// (interval: epoch) from 0. Stateless, so that --resume and the last, smaller batch's program
// need nothing but t.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/diagnostic.h"

namespace gxc {

class LrSchedule {
 public:
  // The model's schedule; none when its train: section has none (a constant lr).
  static std::optional<LrSchedule> fromAttrs(const Attrs& attrs, const std::string& modelPath);

  bool perEpoch() const { return perEpoch_; }
  // The lr after `t` scheduler steps, from the optimizer's lr `baseLr` (one_cycle_lr ignores it,
  // as torch's OneCycleLR does).
  double at(double baseLr, int64_t t) const;
  // Refuses a run of `count` scheduler steps that one_cycle_lr's total_steps cannot cover (torch
  // raises at its next step), before any step runs.
  void checkLength(int64_t count) const;
  bool setsItsOwnLr() const { return parts_.front().kind == "one_cycle_lr"; }

 private:
  struct Part {
    std::string kind;
    Attrs options;  // lr_schedule.I.* without the prefix
    SourceLoc loc;  // the schedule's name in the model
  };
  static double partAt(const Part& part, double baseLr, int64_t t);

  bool perEpoch_ = false;
  std::vector<Part> parts_;
  std::vector<int64_t> milestones_;  // sequential_lr: where parts_[i + 1] begins
};

}  // namespace gxc
