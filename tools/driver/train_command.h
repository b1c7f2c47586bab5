// `gxc train`: the training loop over a model's compiled training step (cli.md, "Options of
// train"; the step itself is graph: passes/autodiff.h, passes/optimizer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "frontend/training_loss.h"
#include "tools/driver/compile_session.h"

namespace gxc {

struct TrainOptions {
  CompileOptions compile;
  std::string dataPath;  // --data FILE.npz
  std::string valPath;   // --val FILE.npz
  // Overrides of the model's train: section.
  std::optional<int64_t> epochs, steps, batchSize;
  std::optional<double> lr;
  std::string optimizer;   // empty: the model's
  TrainingLoss addedLoss;  // --loss and --target, for a model without a train: section
  std::string autocast;    // --autocast bf16: overrides train: autocast
  bool noShuffle = false;
  std::string savePath;        // --save FILE.safetensors
  std::string checkpointDir;   // --checkpoint DIR: DIR/epoch-N.safetensors after every epoch
  std::string resumePath;      // --resume FILE: go on from a checkpoint
  std::string logPath;         // --log FILE.jsonl
  std::string tensorboardDir;  // --tensorboard DIR
  std::string reportPath;      // --report FILE.json: the last step's run summary
  std::string tracePath;       // --trace FILE.json: the last step's Chrome trace (sim)
};

// Returns the exit status; the final loss goes to `out`, notes and progress to `err`.
int trainModel(const TrainOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gxc
