#include "tools/driver/train_data.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/param_init.h"
#include "tensor/npy.h"
#include "tensor/npz.h"

namespace gxc {

TrainingData::TrainingData(const std::string& path, const std::string& option)
    : path_(path), option_(option) {
  std::string firstName;
  for (NpzArray& array : readNpz(path)) {
    const Shape& shape = array.tensor.shape();
    if (shape.empty())
      fail(fmt::format("array '{}' is 0-d; dim 0 of every array counts the samples", array.name));
    if (firstName.empty()) {
      firstName = array.name;
      samples_ = shape[0];
    } else if (shape[0] != samples_) {
      fail(fmt::format("arrays '{}' and '{}' have {} and {} samples (dim 0 must be equal)",
                       firstName, array.name, samples_, shape[0]));
    }
    arrays_[array.name] = std::move(array.tensor);
  }
  if (samples_ == 0) fail("the file holds no samples");
}

void TrainingData::fail(const std::string& text) const {
  throw Error(ErrorKind::Model, {path_, 0, 0}, fmt::format("{}: {}", option_, text));
}

void TrainingData::check(const Graph& model) const {
  std::vector<std::string> missing, inputs;
  for (const Value* input : model.inputs()) {
    inputs.push_back(input->name);
    if (!arrays_.count(input->name)) missing.push_back(input->name);
  }
  if (!missing.empty())
    fail(
        fmt::format("no array for the model's input{} {} (the arrays are named after the "
                    "inputs: numpy.savez(FILE, {}=...))",
                    missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), missing.front()));
  for (const auto& [name, tensor] : arrays_) {
    const Value* input = model.find(name);
    if (!input || input->producer)
      fail(fmt::format("array '{}' is not an input of the model (its inputs: {})", name,
                       fmt::join(inputs, ", ")));
    bool sameShape = tensor.shape().size() == input->type.shape.size();
    for (size_t d = 1; sameShape && d < tensor.shape().size(); ++d)
      sameShape = tensor.shape()[d] == input->type.shape[d];
    // Another dtype gets the astype that fixes it, as a .npy input does (tensor/npy.h).
    bool sameDType = tensor.dtype() == input->type.dtype;
    if (!sameDType || !sameShape)
      fail(
          fmt::format("array '{}' is {}{}, but input '{}' is {} ({}); dim 0 counts the "
                      "samples{}",
                      name, dtypeName(tensor.dtype()), shapeString(tensor.shape()), name,
                      input->type.withoutDevice(), input->loc.where(),
                      sameDType ? "" : "; save with " + npyAstype(input->type.dtype)));
  }
}

void TrainingData::checkClassTargets(const Graph& model) const {
  for (const auto& [name, array] : arrays_) {
    const Value* input = model.find(name);
    if (!input || input->producer || !isInteger(array.dtype())) continue;
    const int64_t perSample = array.numel() / samples_;
    for (const Op* loss : model.users(input)) {
      if ((loss->kind != OpKind::CrossEntropy && loss->kind != OpKind::NllLoss) ||
          loss->operands.size() < 2 || loss->operands[1] != input)
        continue;
      const int64_t classes = loss->operands[0]->type.shape.at(1);
      const int64_t ignoreIndex = loss->attrs.getInt("ignore_index", -100);
      for (int64_t i = 0; i < array.numel(); ++i) {
        const int64_t target = array.loadInt(i);
        if ((target < 0 || target >= classes) && target != ignoreIndex)
          fail(
              fmt::format("array '{}', row {}: class {} is out of range [0, {}) of {} layer "
                          "'{}' ({})",
                          name, i / perSample, target, classes, opName(loss->kind),
                          loss->layerName(), loss->loc.where()));
      }
    }
  }
}

Shape TrainingData::batchShape(const std::string& name, int64_t rows) const {
  Shape shape = arrays_.at(name).shape();
  shape[0] = rows;
  return shape;
}

std::map<std::string, Tensor> TrainingData::gather(const std::vector<int64_t>& rows) const {
  std::map<std::string, Tensor> batch;
  for (const auto& [name, array] : arrays_) {
    Tensor picked(array.dtype(), batchShape(name, static_cast<int64_t>(rows.size())));
    size_t rowBytes = array.nbytes() / static_cast<size_t>(samples_);
    for (size_t i = 0; i < rows.size(); ++i)
      std::memcpy(picked.data() + i * rowBytes, array.data() + rows[i] * rowBytes, rowBytes);
    batch.emplace(name, std::move(picked));
  }
  return batch;
}

std::vector<int64_t> epochOrder(int64_t samples, bool shuffle, int64_t seed, int64_t epoch) {
  std::vector<int64_t> order(samples);
  std::iota(order.begin(), order.end(), 0);
  if (!shuffle) return order;
  // Fisher-Yates over the seed's keyed stream: no library distribution, so every platform
  // and standard library draws the same order.
  KeyedRandom random(seed, fmt::format("train.shuffle.epoch{}", epoch));
  for (int64_t i = samples - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(random.nextBits() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

}  // namespace gxc
