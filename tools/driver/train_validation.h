// `gxc train --val FILE.npz`: the loss of the params trained so far on a validation set,
// after every epoch, with no update. It runs the model's forward (the default pipeline, with
// the loss layer made an output), compiled once per batch size as the training step is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tools/driver/train_data.h"
#include "tools/driver/train_step.h"

namespace gxc {

class Validation {
 public:
  using Compile = std::function<std::unique_ptr<StepProgram>(int64_t rows)>;
  // Batches of `batch` rows in the file's order, the last one smaller; `loss` names the loss.
  Validation(const TrainingData& data, Compile compile, int64_t batch, std::string loss);

  // The mean of the batches' losses, each weighted by its rows: for a loss of reduction
  // 'mean', the mean over every sample, as a whole-set evaluation would give it.
  double loss(const std::map<std::string, Tensor>& params);

 private:
  const TrainingData& data_;
  Compile compile_;
  int64_t batch_;
  std::string loss_;
  std::map<int64_t, std::unique_ptr<StepProgram>> programs_;
};

// Makes the `train_loss` layer an output of `model`, so that a forward compile computes it.
void outputTheLoss(Graph& model);

}  // namespace gxc
