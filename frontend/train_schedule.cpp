// The `schedule:` of a model's `train:` section (docs/model-format.md, "Learning-rate
// schedules"): torch.optim.lr_scheduler's StepLR, CosineAnnealingLR, OneCycleLR, LinearLR and
// SequentialLR, under their snake_case names with torch's own argument names, and `interval`
// (how often torch's loop would call scheduler.step(): after every optimizer step or every
// epoch). Every value is checked here, against its YAML node, so that a bad one stops
// `gxc train` before anything compiles; the schedule goes into the graph's attributes
// `lr_schedule*` (the driver evaluates it, tools/driver/train_schedule.h) and `lr_per_step`
// (the optimizer pass reads lr from a param the driver writes, passes/optimizer.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "frontend/model_builder.h"

namespace gxc {
namespace {

constexpr std::string_view kScheduleKeys[] = {"step_lr",   "cosine_annealing_lr", "one_cycle_lr",
                                              "linear_lr", "sequential_lr",       "interval"};
// What a sequential_lr may chain: the schedules whose value depends only on the steps taken
// since they began (one_cycle_lr sets its own initial lr, as torch's does, and nesting would
// add nothing).
constexpr std::string_view kChainable[] = {"step_lr", "cosine_annealing_lr", "linear_lr"};

}  // namespace

// One schedule (`kind`: its options map) as part `index` of the graph's schedule.
void ModelBuilder::readSchedulePart(const std::string& kind, const YamlNode& key,
                                    const YamlNode& options, int index) {
  Attrs& attrs = graph_->attrs();
  std::string prefix = fmt::format("lr_schedule.{}", index);
  attrs.set(prefix, kind);
  SourceLoc at = reader_.loc(key);
  attrs.set(prefix + ".line", int64_t{at.line});
  attrs.set(prefix + ".col", int64_t{at.col});
  if (!options.isNull()) reader_.requireMap(options, fmt::format("train: schedule: {}", kind));
  auto number = [&](const char* name, std::optional<double> fallback, auto valid,
                    std::string_view rule) {
    YamlNode node = options.isNull() ? YamlNode() : options[name];
    if (!node && !fallback)
      reader_.fail(options.isNull() ? key : options, "{} needs '{}'", kind, name);
    double value = node ? reader_.number(node, name) : *fallback;
    if (!std::isfinite(value) || !valid(value))
      reader_.fail(node, "train: schedule: {}: {} is {}; it must be {}", kind, name, value, rule);
    attrs.set(prefix + "." + name, value);
    return value;
  };
  auto count = [&](const char* name) {
    YamlNode node = options.isNull() ? YamlNode() : options[name];
    if (!node) reader_.fail(options.isNull() ? key : options, "{} needs '{}'", kind, name);
    int64_t value = reader_.integer(node, name);
    if (value < 1)
      reader_.fail(node, "train: schedule: {}: {} is {}; it must be at least 1", kind, name, value);
    attrs.set(prefix + "." + name, value);
    return value;
  };
  auto nonNegative = [](double v) { return v >= 0; };
  auto positive = [](double v) { return v > 0; };
  if (kind == "step_lr") {
    if (!options.isNull()) reader_.checkKeys(options, {"step_size", "gamma"}, kind);
    count("step_size");
    number("gamma", 0.1, nonNegative, "a finite number >= 0");
  } else if (kind == "cosine_annealing_lr") {
    if (!options.isNull()) reader_.checkKeys(options, {"T_max", "eta_min"}, kind);
    count("T_max");
    number("eta_min", 0.0, nonNegative, "a finite number >= 0");
  } else if (kind == "linear_lr") {
    if (!options.isNull())
      reader_.checkKeys(options, {"start_factor", "end_factor", "total_iters"}, kind);
    // torch.optim.lr_scheduler.LinearLR's defaults and ranges.
    number(
        "start_factor", 1.0 / 3, [](double v) { return v > 0 && v <= 1; }, "in (0, 1]");
    number(
        "end_factor", 1.0, [](double v) { return v >= 0 && v <= 1; }, "in [0, 1]");
    if (options.isNull() || !options["total_iters"])
      attrs.set(prefix + ".total_iters", int64_t{5});
    else
      count("total_iters");
  } else if (kind == "one_cycle_lr") {
    if (options.isNull()) reader_.fail(key, "one_cycle_lr needs 'max_lr' and 'total_steps'");
    reader_.checkKeys(options,
                      {"max_lr", "total_steps", "pct_start", "anneal_strategy", "div_factor",
                       "final_div_factor", "three_phase", "cycle_momentum"},
                      kind);
    number("max_lr", std::nullopt, positive, "a finite number > 0");
    int64_t total = count("total_steps");
    double pct = number(
        "pct_start", 0.3, [](double v) { return v >= 0 && v <= 1; }, "in [0, 1]");
    number("div_factor", 25.0, positive, "a finite number > 0");
    number("final_div_factor", 1e4, positive, "a finite number > 0");
    std::string strategy = "cos";
    if (options["anneal_strategy"]) {
      strategy = reader_.scalar(options["anneal_strategy"], "anneal_strategy");
      if (strategy != "cos" && strategy != "linear")
        reader_.fail(options["anneal_strategy"],
                     "train: schedule: one_cycle_lr: anneal_strategy '{}' is not cos or linear",
                     strategy);
    }
    attrs.set(prefix + ".anneal_strategy", strategy);
    bool threePhase =
        options["three_phase"] && reader_.boolean(options["three_phase"], "three_phase");
    attrs.set(prefix + ".three_phase", threePhase);
    // torch's default cycles SGD's momentum or Adam's beta1 against the lr; gxc's optimizer
    // takes them as constants, so the user says that this is the schedule they mean.
    YamlNode cycle = options["cycle_momentum"];
    if (!cycle || reader_.boolean(cycle, "cycle_momentum"))
      reader_.fail(cycle ? cycle : key,
                   "train: schedule: one_cycle_lr: gxc does not cycle the momentum (torch's "
                   "default, cycle_momentum: true); write cycle_momentum: false, as "
                   "OneCycleLR(..., cycle_momentum=False)");
    // torch divides by each phase's length, which is zero when pct_start * total_steps is 1.
    if (pct * static_cast<double>(total) == 1.0)
      reader_.fail(options["pct_start"] ? options["pct_start"] : options["total_steps"],
                   "train: schedule: one_cycle_lr: pct_start * total_steps is 1, which makes "
                   "an empty first phase (torch's OneCycleLR divides by zero there)");
  }
}

void ModelBuilder::readSchedule(const YamlNode& spec) {
  reader_.requireMap(spec, "train: schedule");
  reader_.checkKeys(spec, kScheduleKeys, "train: schedule");
  Attrs& attrs = graph_->attrs();
  YamlNode interval = reader_.required(spec, "interval", "train: schedule");
  std::string every = reader_.scalar(interval, "interval");
  if (every != "step" && every != "epoch")
    reader_.fail(interval,
                 "train: schedule: interval '{}' is not step (scheduler.step() after every "
                 "optimizer step) or epoch (after every epoch)",
                 every);
  YamlNode kindKey, options;
  for (const auto& entry : spec) {
    if (entry.first.scalar() == "interval") continue;
    if (kindKey)
      reader_.fail(entry.first,
                   "train: schedule has two schedules ('{}' and '{}'); chain them with "
                   "sequential_lr",
                   kindKey.scalar(), entry.first.scalar());
    kindKey = entry.first;
    options = entry.second;
  }
  if (!kindKey)
    reader_.fail(spec,
                 "train: schedule names no schedule (step_lr, cosine_annealing_lr, "
                 "one_cycle_lr, linear_lr or sequential_lr)");
  attrs.set("lr_schedule", every);
  attrs.set("lr_per_step", true);
  std::string kind = kindKey.scalar();
  if (kind != "sequential_lr") {
    readSchedulePart(kind, kindKey, options, 0);
    attrs.set("lr_schedule.count", int64_t{1});
    // torch's OneCycleLR replaces the optimizer's lr with its own (max_lr / div_factor).
    if (kind == "one_cycle_lr")
      attrs.set("lr", attrs.getFloat("lr_schedule.0.max_lr", 0) /
                          attrs.getFloat("lr_schedule.0.div_factor", 25));
    return;
  }
  reader_.requireMap(options, "train: schedule: sequential_lr");
  reader_.checkKeys(options, {"schedulers", "milestones"}, "sequential_lr");
  YamlNode schedulers = reader_.required(options, "schedulers", "sequential_lr");
  YamlNode milestones = reader_.required(options, "milestones", "sequential_lr");
  reader_.requireSequence(schedulers, "sequential_lr: schedulers");
  reader_.requireSequence(milestones, "sequential_lr: milestones");
  if (schedulers.size() < 1 || milestones.size() + 1 != schedulers.size())
    reader_.fail(milestones,
                 "sequential_lr: {} schedulers need {} milestones (the step each one after the "
                 "first begins at), got {}",
                 schedulers.size(), schedulers.size() ? schedulers.size() - 1 : 0,
                 milestones.size());
  int index = 0;
  for (const YamlNode& part : schedulers) {
    reader_.requireMap(part, "a scheduler of sequential_lr");
    reader_.checkKeys(part, kChainable, "a scheduler of sequential_lr");
    if (part.size() != 1)
      reader_.fail(part, "a scheduler of sequential_lr has one key, the schedule");
    const auto& entry = *part.begin();
    readSchedulePart(entry.first.scalar(), entry.first, entry.second, index++);
  }
  std::vector<int64_t> at;
  for (const YamlNode& milestone : milestones) {
    int64_t value = reader_.integer(milestone, "a milestone");
    if (value < 1 || (!at.empty() && value <= at.back()))
      reader_.fail(milestone,
                   "sequential_lr: milestone {} must be at least 1 and above the one before",
                   value);
    at.push_back(value);
  }
  attrs.set("lr_schedule.count", int64_t{index});
  attrs.set("lr_schedule.milestones", at);
}

}  // namespace gxc
