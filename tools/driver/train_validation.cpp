#include "tools/driver/train_validation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gxc {
namespace {

const Op* trainingLoss(const Graph& model) {
  const Value* loss = model.find(model.attrs().getString("train_loss", ""));
  return loss ? loss->producer : nullptr;
}

// The name under which `value` is an output of `model`: its own unless it is one already.
std::string outputName(const Graph& model, const Value* value) {
  for (const GraphOutput& output : model.outputs())
    if (output.value == value) return output.name;
  return value->name;
}

}  // namespace

ClassTally tallyClasses(const Tensor& scores, const Tensor& targets, int64_t ignoreIndex) {
  ClassTally tally;
  const int64_t rows = scores.shape().at(0), classes = scores.shape().at(1);
  const int64_t positions = scores.numel() / std::max<int64_t>(1, rows * classes);
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t p = 0; p < positions; ++p) {
      int64_t target = targets.loadInt(n * positions + p);
      if (target == ignoreIndex) continue;
      int64_t best = 0;
      double bestScore = scores.loadDouble(n * classes * positions + p);
      for (int64_t c = 1; c < classes && !std::isnan(bestScore); ++c) {
        double score = scores.loadDouble((n * classes + c) * positions + p);
        if (score > bestScore || std::isnan(score)) best = c, bestScore = score;
      }
      ++tally.counted;
      tally.correct += best == target;
    }
  return tally;
}

std::optional<ClassifierScores> classifierScoresOf(const Graph& model) {
  const Op* loss = trainingLoss(model);
  if (!loss || (loss->kind != OpKind::CrossEntropy && loss->kind != OpKind::NllLoss)) return {};
  const Value* target = loss->operands.at(1);
  if (target->producer) return {};  // targets the model computes: not in the data file
  return ClassifierScores{outputName(model, loss->operands.at(0)), target->name,
                          loss->attrs.getInt("ignore_index", -100)};
}

Validation::Validation(const TrainingData& data, Compile compile, int64_t batch, std::string loss,
                       std::optional<ClassifierScores> classifier)
    : data_(data),
      compile_(std::move(compile)),
      batch_(batch),
      loss_(std::move(loss)),
      classifier_(std::move(classifier)) {
  // Compiled now, so that a validation set the model cannot take is refused before training.
  int64_t first = std::min(batch_, data_.samples());
  programs_.emplace(first, compile_(first));
}

ValidationResult Validation::run(const std::map<std::string, Tensor>& params) {
  double weighted = 0;
  ClassTally total;
  for (int64_t begin = 0; begin < data_.samples(); begin += batch_) {
    int64_t rows = std::min(batch_, data_.samples() - begin);
    auto found = programs_.find(rows);
    if (found == programs_.end()) found = programs_.emplace(rows, compile_(rows)).first;
    StepProgram& program = *found->second;
    program.setParamValues(params);
    std::vector<int64_t> samples(rows);
    std::iota(samples.begin(), samples.end(), begin);
    std::map<std::string, Tensor> inputs = data_.gather(samples);
    std::map<std::string, Tensor> outputs = program.run(inputs);
    const Tensor& loss = outputs.at(loss_);
    weighted += loadDoubleAt(loss.dtype(), loss.data(), 0) * static_cast<double>(rows);
    if (!classifier_) continue;
    ClassTally batch = tallyClasses(outputs.at(classifier_->scores), inputs.at(classifier_->target),
                                    classifier_->ignoreIndex);
    total.counted += batch.counted;
    total.correct += batch.correct;
  }
  ValidationResult result{weighted / static_cast<double>(data_.samples()), std::nullopt};
  if (classifier_ && total.counted > 0)
    result.accuracy = static_cast<double>(total.correct) / static_cast<double>(total.counted);
  return result;
}

void outputTheLoss(Graph& model) {
  const Op* loss = trainingLoss(model);
  if (!loss) return;  // the training compile refuses the model, naming the loss
  std::vector<Value*> wanted{loss->result};
  if (classifierScoresOf(model)) wanted.push_back(loss->operands.at(0));
  for (Value* value : wanted)
    if (std::none_of(model.outputs().begin(), model.outputs().end(),
                     [&](const GraphOutput& output) { return output.value == value; }))
      model.addOutput(value->name, value);
}

}  // namespace gxc
