// The model's `train:` section (format 1.1, docs/model-format.md), read into the graph: its
// attributes say what to minimize and how (`train_loss`, `optimizer`, `lr`, ...; the autodiff
// and optimizer passes read them, passes/autodiff.h and passes/optimizer.h), and params it
// lists in `frozen` get the attribute `frozen`. `gxc train` overrides each key from its
// command line; `gxc run` ignores the section.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "frontend/model_builder.h"

namespace gxc {
namespace {

constexpr std::string_view kOptimizers[] = {"sgd", "adam", "adamw"};

}  // namespace

void ModelBuilder::readOptimizer(const YamlNode& spec) {
  reader_.requireMap(spec, "train: optimizer");
  if (spec.size() != 1)
    reader_.fail(spec, "train: optimizer must have one key, the optimizer (sgd, adam or adamw)");
  const auto& entry = *spec.begin();
  std::string kind = reader_.scalar(entry.first, "an optimizer");
  Attrs& attrs = graph_->attrs();
  if (std::find(std::begin(kOptimizers), std::end(kOptimizers), kind) == std::end(kOptimizers))
    reader_.fail(entry.first, "unknown optimizer '{}' (sgd, adam or adamw)", kind);
  attrs.set("optimizer", kind);
  const YamlNode& options = entry.second;
  if (options.isNull()) return;
  reader_.requireMap(options, fmt::format("the {} options", kind));
  if (kind == "sgd")
    reader_.checkKeys(options, {"lr", "momentum", "dampening", "nesterov", "weight_decay"}, "sgd");
  else
    reader_.checkKeys(options, {"lr", "betas", "eps", "weight_decay"}, kind);
  for (const char* key : {"lr", "momentum", "dampening", "weight_decay", "eps"}) {
    if (!options[key]) continue;
    double value = reader_.number(options[key], key);
    if (!(value >= 0) || !std::isfinite(value))
      reader_.fail(options[key], "{}: {} must be a finite number >= 0", kind, key);
    attrs.set(key, value);
  }
  if (options["nesterov"]) attrs.set("nesterov", reader_.boolean(options["nesterov"], "nesterov"));
  if (options["betas"]) {
    const YamlNode& betas = options["betas"];
    if (!betas.isSequence() || betas.size() != 2)
      reader_.fail(betas, "{}: betas must be a list of two numbers in [0, 1)", kind);
    for (int i = 0; i < 2; ++i) {
      double beta = reader_.number(betas[i], "a beta");
      if (!(beta >= 0 && beta < 1))
        reader_.fail(betas[i], "{}: betas must be in [0, 1), got {}", kind, beta);
      attrs.set(i == 0 ? "beta1" : "beta2", beta);
    }
  }
}

// torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type), before every optimizer step.
void ModelBuilder::readClipGradNorm(const YamlNode& spec) {
  reader_.requireMap(spec, "train: clip_grad_norm");
  reader_.checkKeys(spec, {"max_norm", "norm_type"}, "train: clip_grad_norm");
  YamlNode maxNorm = reader_.required(spec, "max_norm", "train: clip_grad_norm");
  double value = reader_.number(maxNorm, "max_norm");
  if (!(value > 0) || !std::isfinite(value))
    reader_.fail(maxNorm, "train: clip_grad_norm: max_norm is {}; it must be a finite number > 0",
                 value);
  graph_->attrs().set("clip_grad_max_norm", value);
  double p = 2;
  if (YamlNode type = spec["norm_type"]) {
    const std::string& text = type.isScalar() ? type.scalar() : "";
    p = text == "inf" || text == ".inf" ? INFINITY : reader_.number(type, "norm_type");
    if (!(p > 0) || std::isnan(p))
      reader_.fail(type, "train: clip_grad_norm: norm_type is {}; it must be a number > 0 or inf",
                   p);
  }
  graph_->attrs().set("clip_grad_norm_type", p);
}

void ModelBuilder::readTrainSection(const YamlNode& train) {
  reader_.requireMap(train, "train");
  reader_.checkKeys(train,
                    {"loss", "optimizer", "schedule", "clip_grad_norm", "accumulate", "batch_size",
                     "epochs", "shuffle", "drop_last", "frozen", "autocast"},
                    "train");
  Attrs& attrs = graph_->attrs();
  YamlNode loss = reader_.required(train, "loss", "train");
  std::string lossName = reader_.name(loss, "the loss");
  if (!graph_->find(lossName)) reader_.fail(loss, "train: loss '{}' is not a layer", lossName);
  attrs.set("train_loss", lossName);
  if (train["optimizer"]) readOptimizer(train["optimizer"]);
  if (train["schedule"]) readSchedule(train["schedule"]);  // after the optimizer: its lr
  if (train["clip_grad_norm"]) readClipGradNorm(train["clip_grad_norm"]);
  // accumulate: micro-batches of batch_size per optimizer step (an attribute of its own name:
  // the optimizer pass reads it too).
  if (YamlNode micro = train["accumulate"]) {
    int64_t value = reader_.integer(micro, "accumulate");
    if (value < 1) reader_.fail(micro, "train: accumulate must be at least 1, got {}", value);
    attrs.set("accumulate", value);
  }
  for (const char* key : {"batch_size", "epochs"}) {
    if (!train[key]) continue;
    int64_t value = reader_.integer(train[key], key);
    if (value < 1) reader_.fail(train[key], "train: {} must be at least 1, got {}", key, value);
    attrs.set(std::string("train_") + key, value);
  }
  if (train["autocast"]) {
    std::string dtype = reader_.scalar(train["autocast"], "autocast");
    if (dtype != "bf16")
      reader_.fail(train["autocast"], "train: autocast '{}' is not supported (bf16 is)", dtype);
    attrs.set("autocast", dtype);
  }
  for (const char* key : {"shuffle", "drop_last"})
    if (train[key]) attrs.set(std::string("train_") + key, reader_.boolean(train[key], key));
  if (!train["frozen"]) return;
  reader_.requireSequence(train["frozen"], "train: frozen");
  for (const YamlNode& entry : train["frozen"]) {
    std::string name = reader_.name(entry, "a frozen param");
    Value* param = graph_->find(name);
    if (!param || !param->producer || param->producer->kind != OpKind::Param)
      reader_.fail(entry, "train: frozen: '{}' is not a param of the model", name);
    param->producer->attrs.set("frozen", true);
  }
}

}  // namespace gxc
