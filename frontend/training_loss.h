// A loss attached to a model that has none, for training it: `gxc train MODEL --loss
// cross_entropy --target y` (and Python's `Trainer(loss=..., target=...)`), as a PyTorch user
// writes `F.cross_entropy(model(x), y)` around a module, an ONNX export above all.
#pragma once

#include <string>

#include "ir/graph.h"

namespace gxc {

struct TrainingLoss {
  std::string loss;    // a loss of the model format: mse_loss, cross_entropy, nll_loss, ...
  std::string target;  // the new input the loss compares the model's first output with
};

// Adds `target` as an input and a layer `loss` (the name made unique) computing
// loss(first output, target), and makes it the model's training loss (the graph attribute
// `train_loss`, which a train: section sets). The target's type follows the output's, as
// torch's losses want it: the output's shape and dtype for the elementwise losses; i64 and the
// output's shape without its class dim (dim 1) for cross_entropy and nll_loss.
// Errors (usage): a model whose train: section names a loss already, a name that is not a
// loss (with the nearest one), a target name the model uses, an output the loss cannot take.
void addTrainingLoss(Graph& graph, const TrainingLoss& loss);

}  // namespace gxc
