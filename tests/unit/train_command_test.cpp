// `gxc train`'s refusals of bad input (each one clear line, the exit status of cli.md, before
// anything is written) and what it writes when training succeeds.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tensor/npz.h"
#include "tensor/safetensors.h"
#include "tests/unit/scratch_dir.h"
#include "tools/driver/train_command.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModel = R"(gxc: 1
name: regression
seed: 1
dims: {batch: 4}
inputs:
  x: {shape: [batch, 3]}
  y: {shape: [batch, 1]}
layers:
  - {name: fc, op: linear, inputs: [x], in_features: 3, out_features: 1}
  - {name: loss, op: mse_loss, inputs: [fc, y]}
outputs: [loss]
train: {loss: loss, optimizer: {sgd: {lr: 0.1}}, batch_size: 4, epochs: 2}
)";

class TrainCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = makeScratchDir(
        "gxc-train-" +
        std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    model_ = (dir_ / "model.yaml").string();
    std::ofstream(model_) << kModel;
  }
  void TearDown() override { fs::remove_all(dir_); }

  Tensor filled(DType dtype, Shape shape, double start) {
    Tensor tensor(dtype, std::move(shape));
    for (int64_t i = 0; i < tensor.numel(); ++i) tensor.storeDouble(i, start + 0.01 * i);
    return tensor;
  }
  std::string data(std::vector<NpzArray> arrays) {
    std::string path = (dir_ / "data.npz").string();
    writeNpz(path, arrays);
    return path;
  }
  std::string goodData(int64_t samples) {
    return data({{"x", filled(DType::F32, {samples, 3}, 0.5)},
                 {"y", filled(DType::F32, {samples, 1}, -0.2)}});
  }
  TrainOptions options(const std::string& dataPath) {
    TrainOptions train;
    train.compile.modelPath = model_;
    train.compile.devices = "cpu";
    train.dataPath = dataPath;
    return train;
  }
  // The error `train` throws, as gxc prints it, and its kind.
  std::pair<std::string, ErrorKind> refusal(const TrainOptions& train) {
    std::ostringstream out, err;
    try {
      trainModel(train, out, err);
    } catch (const Error& error) {
      return {formatError(error), error.kind()};
    }
    ADD_FAILURE() << "trained: " << out.str();
    return {"", ErrorKind::Runtime};
  }

  fs::path dir_;
  std::string model_;
};

TEST_F(TrainCommandTest, RefusesMissingExtraMistypedAndUnequalArrays) {
  auto [missing, kind] = refusal(options(data({{"x", filled(DType::F32, {8, 3}, 0)}})));
  EXPECT_NE(missing.find("data.npz: error: --data: no array for the model's input y"),
            std::string::npos)
      << missing;
  EXPECT_EQ(kind, ErrorKind::Model);
  auto extra = refusal(options(data({{"x", filled(DType::F32, {8, 3}, 0)},
                                     {"y", filled(DType::F32, {8, 1}, 0)},
                                     {"z", filled(DType::F32, {8, 1}, 0)}})));
  EXPECT_NE(extra.first.find("--data: array 'z' is not an input of the model (its inputs: x, y)"),
            std::string::npos)
      << extra.first;
  auto mistyped = refusal(
      options(data({{"x", filled(DType::F64, {8, 3}, 0)}, {"y", filled(DType::F32, {8, 1}, 0)}})));
  EXPECT_NE(mistyped.first.find("--data: array 'x' is f64[8,3], but input 'x' is f32[4,3]"),
            std::string::npos)
      << mistyped.first;
  auto unequal = refusal(
      options(data({{"x", filled(DType::F32, {8, 3}, 0)}, {"y", filled(DType::F32, {7, 1}, 0)}})));
  EXPECT_NE(unequal.first.find("arrays 'x' and 'y' have 8 and 7 samples (dim 0 must be equal)"),
            std::string::npos)
      << unequal.first;
  EXPECT_EQ(unequal.second, ErrorKind::Model);
}

TEST_F(TrainCommandTest, RefusesBadSettings) {
  TrainOptions negative = options(goodData(8));
  negative.lr = -1.0;
  EXPECT_EQ(refusal(negative), std::make_pair(std::string("gxc: error: --lr -1: expected a finite "
                                                          "number >= 0"),
                                              ErrorKind::Usage));
  TrainOptions notANumber = options(goodData(8));
  notANumber.lr = std::nan("");
  EXPECT_EQ(refusal(notANumber).second, ErrorKind::Usage);
  std::string text = kModel;
  text.replace(text.find("epochs: 2}"), 10, "epochs: 2, drop_last: true}");
  std::ofstream(model_, std::ios::trunc) << text;
  TrainOptions tooBig = options(goodData(3));
  auto [line, kind] = refusal(tooBig);
  EXPECT_NE(line.find("--data: 3 samples make no batch of 4 with drop_last"), std::string::npos)
      << line;
  EXPECT_EQ(kind, ErrorKind::Model);
}

// What the train: section must say, or the command line instead.
TEST_F(TrainCommandTest, RefusesAModelThatSaysNotWhatToMinimizeOrHow) {
  auto withTrain = [&](const std::string& section) {
    std::string text = kModel;
    text.replace(text.find("train: "), std::string::npos, section);
    std::ofstream(model_, std::ios::trunc) << text;
  };
  withTrain("");
  EXPECT_EQ(refusal(options(goodData(8))),
            std::make_pair(model_ + ": error: the model has no train: section naming its loss "
                                    "(train: {loss: LAYER, ...}; docs/model-format.md, Training); "
                                    "or give one: --loss cross_entropy --target NAME",
                           ErrorKind::Model));
  withTrain("train: {loss: loss, batch_size: 4}\n");
  EXPECT_EQ(refusal(options(goodData(8))),
            std::make_pair(std::string("gxc: error: the model's train: section names no "
                                       "optimizer; give one (--optimizer sgd|adam|adamw)"),
                           ErrorKind::Usage));
  withTrain("train: {loss: loss, optimizer: {sgd: {momentum: 0.9}}, batch_size: 4}\n");
  EXPECT_EQ(refusal(options(goodData(8))),
            std::make_pair(std::string("gxc: error: the model's train: section gives no lr; "
                                       "give one (--lr LR)"),
                           ErrorKind::Usage));
  withTrain("train: {loss: loss, optimizer: {sgd: {lr: 0.1}}}\n");
  EXPECT_EQ(refusal(options(goodData(8))),
            std::make_pair(std::string("gxc: error: the model's train: section gives no "
                                       "batch_size; give one (--batch-size B)"),
                           ErrorKind::Usage));
}

TEST_F(TrainCommandTest, StopsWhenTheLossIsNotFiniteNamingTheStep) {
  TrainOptions diverging = options(goodData(8));
  diverging.lr = 1e30;
  diverging.savePath = (dir_ / "trained.safetensors").string();
  auto [line, kind] = refusal(diverging);
  EXPECT_NE(line.find("the loss became"), std::string::npos) << line;
  EXPECT_NE(line.find("at epoch 1, step 2"), std::string::npos) << line;
  EXPECT_EQ(kind, ErrorKind::Runtime);
  EXPECT_FALSE(fs::exists(diverging.savePath));
}

TEST_F(TrainCommandTest, TrainsTheLastSmallerBatchAndSavesTheModelParamsOnly) {
  TrainOptions train = options(goodData(10));  // batches of 4, 4 and 2
  train.logPath = (dir_ / "log.jsonl").string();
  train.savePath = (dir_ / "trained.safetensors").string();
  std::ostringstream out, err;
  ASSERT_EQ(trainModel(train, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("trained 6 steps"), std::string::npos) << out.str();
  std::ifstream log(train.logPath);
  std::string line;
  int lines = 0;
  while (std::getline(log, line)) ++lines;
  EXPECT_EQ(lines, 6);
  SafetensorsFile saved = SafetensorsFile::open(train.savePath);
  ASSERT_EQ(saved.entries().size(), 2u);  // fc.weight, fc.bias: no optimizer state, no seed
  EXPECT_TRUE(saved.contains("fc.weight"));
  EXPECT_TRUE(saved.contains("fc.bias"));
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(file, line);) all.push_back(line);
  return all;
}

// The losses of a run resumed from a checkpoint are those of the run that was not interrupted,
// to the bit: params, optimizer state and step count come back, and each epoch's shuffled
// order depends on the seed and the epoch only.
TEST_F(TrainCommandTest, ResumeGoesOnExactlyAsAnUninterruptedRun) {
  std::string dataPath = goodData(10);
  std::ostringstream out, err;
  TrainOptions whole = options(dataPath);
  whole.epochs = 3;
  whole.logPath = (dir_ / "whole.jsonl").string();
  ASSERT_EQ(trainModel(whole, out, err), 0) << err.str();
  TrainOptions first = options(dataPath);
  first.epochs = 1;
  first.checkpointDir = (dir_ / "checkpoints").string();
  ASSERT_EQ(trainModel(first, out, err), 0) << err.str();
  ASSERT_TRUE(fs::exists(dir_ / "checkpoints" / "epoch-1.safetensors"));
  TrainOptions rest = options(dataPath);
  rest.epochs = 3;
  rest.resumePath = (dir_ / "checkpoints" / "epoch-1.safetensors").string();
  rest.logPath = (dir_ / "rest.jsonl").string();
  ASSERT_EQ(trainModel(rest, out, err), 0) << err.str();
  std::vector<std::string> uninterrupted = lines(whole.logPath);
  std::vector<std::string> resumed = lines(rest.logPath);
  ASSERT_EQ(uninterrupted.size(), 9u);
  ASSERT_EQ(resumed.size(), 6u);
  for (size_t i = 0; i < resumed.size(); ++i) {
    auto loss = [](const std::string& line) { return line.substr(0, line.find(",\"lr\"")); };
    EXPECT_EQ(loss(resumed[i]), loss(uninterrupted[i + 3])) << "step " << i + 4;
  }
}

TEST_F(TrainCommandTest, ResumeRefusesACheckpointOfAnotherOptimizer) {
  std::string dataPath = goodData(8);
  std::ostringstream out, err;
  TrainOptions sgd = options(dataPath);
  sgd.epochs = 1;
  sgd.checkpointDir = (dir_ / "checkpoints").string();
  ASSERT_EQ(trainModel(sgd, out, err), 0) << err.str();
  TrainOptions adam = options(dataPath);
  adam.optimizer = "adam";
  adam.resumePath = (dir_ / "checkpoints" / "epoch-1.safetensors").string();
  auto [line, kind] = refusal(adam);
  EXPECT_NE(line.find("epoch-1.safetensors: error: --resume: it has no 'fc.bias.exp_avg'; resume "
                      "from a checkpoint that `gxc train --checkpoint` wrote for this model and "
                      "optimizer"),
            std::string::npos)
      << line;
  EXPECT_EQ(kind, ErrorKind::Model);
}

double jsonNumber(const std::string& line, const std::string& key) {
  size_t at = line.find("\"" + key + "\":");
  EXPECT_NE(at, std::string::npos) << key << " in " << line;
  return at == std::string::npos ? NAN : std::stod(line.substr(at + key.size() + 3));
}

// With lr 0 the params never move, so the validation loss of the training set itself, cut
// into the same batches, is the row-weighted mean of the epoch's step losses.
TEST_F(TrainCommandTest, ValidationLossIsTheRowWeightedMeanOverTheSet) {
  std::string dataPath = goodData(10);  // batches of 4, 4 and 2
  TrainOptions train = options(dataPath);
  train.valPath = dataPath;
  train.lr = 0.0;
  train.noShuffle = true;
  train.logPath = (dir_ / "log.jsonl").string();
  std::ostringstream out, err;
  ASSERT_EQ(trainModel(train, out, err), 0) << err.str();
  std::vector<std::string> log = lines(train.logPath);
  ASSERT_EQ(log.size(), 8u);  // per epoch: 3 steps, then the validation
  double expected = (4 * jsonNumber(log[0], "loss") + 4 * jsonNumber(log[1], "loss") +
                     2 * jsonNumber(log[2], "loss")) /
                    10;
  for (size_t line : {3, 7}) {
    EXPECT_NEAR(jsonNumber(log[line], "val_loss"), expected, 1e-6 * expected) << log[line];
    EXPECT_EQ(jsonNumber(log[line], "step"), line == 3 ? 3 : 6);
  }
  EXPECT_NE(out.str().find("; validation loss "), std::string::npos) << out.str();
}

// The validation after an epoch sees the params that epoch trained: a validation set that
// is the first batch gives the loss the next epoch's first step reports (no shuffle: the step
// computes its loss before its update).
TEST_F(TrainCommandTest, ValidationSeesTheParamsTrainedSoFar) {
  TrainOptions train = options(goodData(8));
  train.valPath = (dir_ / "val.npz").string();
  writeNpz(train.valPath,
           {{"x", filled(DType::F32, {4, 3}, 0.5)}, {"y", filled(DType::F32, {4, 1}, -0.2)}});
  train.noShuffle = true;
  train.logPath = (dir_ / "log.jsonl").string();
  std::ostringstream out, err;
  ASSERT_EQ(trainModel(train, out, err), 0) << err.str();
  std::vector<std::string> log = lines(train.logPath);
  ASSERT_EQ(log.size(), 6u);
  double afterFirstEpoch = jsonNumber(log[2], "val_loss");
  EXPECT_NEAR(afterFirstEpoch, jsonNumber(log[3], "loss"), 1e-6 * afterFirstEpoch);
  EXPECT_LT(afterFirstEpoch, jsonNumber(log[0], "loss"));  // it trained
}

TEST_F(TrainCommandTest, RefusesAValidationSetTheModelCannotTakeBeforeTraining) {
  TrainOptions train = options(goodData(8));
  train.valPath = (dir_ / "val.npz").string();
  writeNpz(train.valPath, {{"x", filled(DType::F32, {4, 3}, 0.5)}});
  train.logPath = (dir_ / "log.jsonl").string();
  auto [line, kind] = refusal(train);
  EXPECT_NE(line.find("val.npz: error: --val: no array for the model's input y"), std::string::npos)
      << line;
  EXPECT_EQ(kind, ErrorKind::Model);
  EXPECT_FALSE(fs::exists(train.logPath));
}

TEST_F(TrainCommandTest, StepsStopsEarly) {
  TrainOptions train = options(goodData(10));
  train.steps = 4;
  std::ostringstream out, err;
  ASSERT_EQ(trainModel(train, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("trained 4 steps"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace gxc
