// `gxc train --val FILE.npz`: the loss of the params trained so far on a validation set,
// after every epoch, with no update, and a classifier's accuracy. It runs the model's forward (the
// default pipeline, with the loss layer made an output), compiled once per batch size as the
// training step is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "tools/driver/train_data.h"
#include "tools/driver/train_step.h"

namespace gxc {

// A classifier's loss (cross_entropy or nll_loss) of scores [N, C, ...] against class indices
// [N, ...] that the data file gives: what its validation's accuracy is measured on.
struct ClassifierScores {
  std::string scores;  // the output that holds the scores (outputTheLoss makes it one)
  std::string target;  // the input of the class indices
  int64_t ignoreIndex = -100;
};

// The classifier's scores of the `train_loss` layer of `model`, if it is one.
std::optional<ClassifierScores> classifierScoresOf(const Graph& model);

// Of class indices `targets` [N, d1, ...] and `scores` [N, C, d1, ...]: the targets counted
// (all but those equal to `ignoreIndex`) and those whose class has the highest score, the
// first one on ties and the first NaN above all, as torch.argmax picks it.
struct ClassTally {
  int64_t counted = 0;
  int64_t correct = 0;
};
ClassTally tallyClasses(const Tensor& scores, const Tensor& targets, int64_t ignoreIndex);

struct ValidationResult {
  // The mean of the batches' losses, each weighted by its rows: for a loss of reduction
  // 'mean', the mean over every sample, as a whole-set evaluation would give it.
  double loss = 0;
  // For a classifier: the share of targets (ignore_index aside) whose class has the highest
  // score, the first one on ties and NaN above all, as torch.argmax picks it.
  std::optional<double> accuracy;
};

class Validation {
 public:
  using Compile = std::function<std::unique_ptr<StepProgram>(int64_t rows)>;
  // Batches of `batch` rows in the file's order, the last one smaller; `loss` names the loss.
  Validation(const TrainingData& data, Compile compile, int64_t batch, std::string loss,
             std::optional<ClassifierScores> classifier);

  ValidationResult run(const std::map<std::string, Tensor>& params);

 private:
  const TrainingData& data_;
  Compile compile_;
  int64_t batch_;
  std::string loss_;
  std::optional<ClassifierScores> classifier_;
  std::map<int64_t, std::unique_ptr<StepProgram>> programs_;
};

// Makes the `train_loss` layer an output of `model`, and a classifier's scores, so that a
// forward compile computes them.
void outputTheLoss(Graph& model);

}  // namespace gxc
