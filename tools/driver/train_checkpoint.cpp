#include "tools/driver/train_checkpoint.h"

#include <filesystem>

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "tensor/safetensors.h"

namespace gxc {
namespace {

constexpr const char* kEpochs = "gxc.train.epoch";
constexpr const char* kSteps = "gxc.train.step";

Tensor counter(int64_t value) {
  Tensor tensor(DType::I64, {});
  tensor.storeInt(0, value);
  return tensor;
}

}  // namespace

std::string writeCheckpoint(const std::string& dir, const TrainCheckpoint& checkpoint) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) runtimeError({}, "--checkpoint {}: {}", dir, ec.message());
  std::map<std::string, Tensor> tensors = checkpoint.params;
  tensors[kEpochs] = counter(checkpoint.epochsDone);
  tensors[kSteps] = counter(checkpoint.stepsDone);
  std::string path =
      (std::filesystem::path(dir) / fmt::format("epoch-{}.safetensors", checkpoint.epochsDone))
          .string();
  writeSafetensors(path, tensors);
  return path;
}

TrainCheckpoint readCheckpoint(const std::string& path,
                               const std::map<std::string, Tensor>& expected) {
  SafetensorsFile file = SafetensorsFile::open(path);
  auto fail = [&](const std::string& text) {
    throw Error(ErrorKind::Model, {path, 0, 0},
                fmt::format("--resume: {}; resume from a checkpoint that `gxc train "
                            "--checkpoint` wrote for this model and optimizer",
                            text));
  };
  TrainCheckpoint checkpoint;
  for (const char* counterName : {kEpochs, kSteps}) {
    if (!file.contains(counterName))
      fail(fmt::format("no '{}': not a gxc checkpoint", counterName));
    Tensor value = file.read(counterName);
    if (value.dtype() != DType::I64 || value.numel() != 1 || value.loadInt(0) < 0)
      fail(fmt::format("'{}' is not a count", counterName));
    (std::string(counterName) == kEpochs ? checkpoint.epochsDone : checkpoint.stepsDone) =
        value.loadInt(0);
  }
  for (const auto& [name, entry] : file.entries())
    if (name != kEpochs && name != kSteps && !expected.count(name))
      fail(fmt::format("it holds '{}', which this model's training has not", name));
  for (const auto& [name, tensor] : expected) {
    if (!file.contains(name)) fail(fmt::format("it has no '{}'", name));
    Tensor value = file.read(name);
    if (value.dtype() != tensor.dtype() || value.shape() != tensor.shape())
      fail(fmt::format("'{}' is {}{} there but {}{} here", name, dtypeName(value.dtype()),
                       shapeString(value.shape()), dtypeName(tensor.dtype()),
                       shapeString(tensor.shape())));
    checkpoint.params.emplace(name, std::move(value));
  }
  return checkpoint;
}

}  // namespace gxc
