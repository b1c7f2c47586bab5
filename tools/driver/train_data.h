// The training set of `gxc train --data FILE.npz`: one array per model input, named after it,
// all with the same dim 0 (samples), cut into batches along dim 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc {

class TrainingData {
 public:
  // Reads FILE.npz: arrays of at least one dim, all with one dim 0. `option` names the
  // command-line option in messages (--data, --val).
  TrainingData(const std::string& path, const std::string& option);
  // Checks the arrays against the compiled model's inputs: every input has an array of its
  // dtype and of its shape but dim 0, and no array is extra. A model error at the file,
  // naming the array, otherwise.
  void check(const Graph& model) const;
  // Every class index the model's cross_entropy and nll_loss layers read from an array is in
  // [0, classes) or their ignore_index: a model error at the file naming the array and the row
  // otherwise (else found mid-training, in a batch's shuffled order).
  void checkClassTargets(const Graph& model) const;
  const std::map<std::string, Tensor>& arrays() const { return arrays_; }

  int64_t samples() const { return samples_; }
  const std::string& path() const { return path_; }
  // The shape of input `name` for a batch of `rows` samples.
  Shape batchShape(const std::string& name, int64_t rows) const;
  // The samples `rows` (indices into dim 0), in that order, of every input.
  std::map<std::string, Tensor> gather(const std::vector<int64_t>& rows) const;

 private:
  [[noreturn]] void fail(const std::string& text) const;

  std::string path_;
  std::string option_;
  std::map<std::string, Tensor> arrays_;
  int64_t samples_ = 0;
};

// The order of the samples in epoch `epoch` (0-based): the file's order, or a permutation
// drawn from the model's seed and the epoch (the same on every run and every platform).
std::vector<int64_t> epochOrder(int64_t samples, bool shuffle, int64_t seed, int64_t epoch);

}  // namespace gxc
