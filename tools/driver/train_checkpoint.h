// `gxc train --checkpoint DIR` and `--resume FILE`: the whole state of training in one
// safetensors file, so that a resumed run takes exactly the steps an uninterrupted one would.
//
// The file holds every param of the training step by name (the model's, and the optimizer's
// state: momentum buffers, Adam's moments, its step count) and two 0-d i64 tensors,
// `gxc.train.epoch` (the epochs done) and `gxc.train.step` (the updates done). Nothing else is
// needed: the order of each epoch's samples is drawn from the model's seed and the epoch
// alone (tools/driver/train_data.h, epochOrder).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tensor/tensor.h"

namespace gxc {

struct TrainCheckpoint {
  std::map<std::string, Tensor> params;  // by name, as the executors give them
  int64_t epochsDone = 0;
  int64_t stepsDone = 0;
};

// Writes DIR/epoch-N.safetensors (N = epochsDone), through a temporary file renamed when
// complete, creating DIR if needed; returns its path.
std::string writeCheckpoint(const std::string& dir, const TrainCheckpoint& checkpoint);

// Reads a checkpoint and checks it against the params of the step about to run (`expected`,
// by name): the same names, dtypes and shapes, or a model error at the file naming the first
// difference (a checkpoint of another model, or of another optimizer).
TrainCheckpoint readCheckpoint(const std::string& path,
                               const std::map<std::string, Tensor>& expected);

}  // namespace gxc
