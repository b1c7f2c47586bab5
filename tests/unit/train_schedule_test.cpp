// Learning-rate schedules against torch.optim.lr_scheduler: tests/fixtures/make_train_fixtures.py
// stepped each schedule of schedules.json as a training loop steps it and recorded the lr before
// every step. Each is read here as a model's `train: schedule:` (the frontend's reading, then the
// driver's evaluation) and must give the same lr at every step, within 1e-6 relative: torch's
// recursive forms and gxc's closed forms differ by rounding only.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/model_loader.h"
#include "tests/unit/scratch_dir.h"
#include "tools/driver/train_command.h"
#include "tools/driver/train_schedule.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// models/mlp_train.yaml with SGD at `lr` and `schedule` (a flow map) stepped per `interval`.
std::unique_ptr<Graph> modelWithSchedule(const std::string& schedule, double lr,
                                         const std::string& interval = "step") {
  std::string text = readText(fs::path(GXC_SOURCE_DIR) / "models/mlp_train.yaml");
  const std::string optimizer = "optimizer: {adam: {lr: 0.01}}";
  size_t at = text.find(optimizer);
  EXPECT_NE(at, std::string::npos) << "models/mlp_train.yaml's optimizer has changed";
  text.replace(at, optimizer.size(),
               "optimizer: {sgd: {lr: " + nlohmann::json(lr).dump() + "}}\n  schedule: " +
                   schedule.substr(0, schedule.size() - 1) + ", interval: " + interval + "}");
  return loadModelFromString(text, "schedule.yaml", GXC_SOURCE_DIR);
}

TEST(TrainScheduleTest, EveryScheduleMatchesPyTorchAtEveryStep) {
  nlohmann::json fixtures = nlohmann::json::parse(
      std::ifstream(fs::path(GXC_SOURCE_DIR) / "tests/fixtures/train/schedules.json"));
  double lr = fixtures.at("lr").get<double>();
  ASSERT_GE(fixtures.at("schedules").size(), 10u);
  for (const auto& fixture : fixtures.at("schedules")) {
    std::string text = fixture.at("schedule").get<std::string>();
    SCOPED_TRACE(text);
    std::unique_ptr<Graph> model = modelWithSchedule(text, lr);
    std::optional<LrSchedule> schedule = LrSchedule::fromAttrs(model->attrs(), "schedule.yaml");
    ASSERT_TRUE(schedule);
    EXPECT_FALSE(schedule->perEpoch());
    const auto& lrs = fixture.at("lrs");
    for (size_t t = 0; t < lrs.size(); ++t) {
      double expected = lrs[t].get<double>();
      EXPECT_NEAR(schedule->at(lr, static_cast<int64_t>(t)), expected,
                  1e-6 * std::abs(expected) + 1e-15)
          << "after " << t << " scheduler steps";
    }
  }
}

TEST(TrainScheduleTest, NoScheduleIsAConstantLr) {
  std::string text = readText(fs::path(GXC_SOURCE_DIR) / "models/mlp_train.yaml");
  std::unique_ptr<Graph> model = loadModelFromString(text, "plain.yaml", GXC_SOURCE_DIR);
  EXPECT_FALSE(LrSchedule::fromAttrs(model->attrs(), "plain.yaml"));
  EXPECT_FALSE(model->attrs().getBool("lr_per_step", false));
}

TEST(TrainScheduleTest, EpochIntervalAndOneCycleLength) {
  std::unique_ptr<Graph> model = modelWithSchedule(
      "{one_cycle_lr: {max_lr: 0.1, total_steps: 4, cycle_momentum: false}}", 0.5, "epoch");
  std::optional<LrSchedule> schedule = LrSchedule::fromAttrs(model->attrs(), "schedule.yaml");
  ASSERT_TRUE(schedule);
  EXPECT_TRUE(schedule->perEpoch());
  EXPECT_TRUE(schedule->setsItsOwnLr());
  // OneCycleLR's initial lr is max_lr / div_factor, whatever the optimizer's lr was.
  EXPECT_DOUBLE_EQ(schedule->at(0.5, 0), 0.1 / 25);
  EXPECT_DOUBLE_EQ(model->attrs().getFloat("lr", 0), 0.1 / 25);
  schedule->checkLength(4);
  try {
    schedule->checkLength(5);
    FAIL() << "5 epochs of a 4-step one_cycle_lr were accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Model);
    EXPECT_NE(std::string(error.what()).find("total_steps is 4, but the training takes 5 epochs"),
              std::string::npos)
        << error.what();
  }
}

std::vector<nlohmann::json> logLines(const fs::path& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// The schedule and the accumulation are functions of the steps and micro-batches counted over
// the run, so a run resumed from a checkpoint goes on exactly: mlp_sgd_accumulate's steps of 3
// micro-batches straddle its epochs of 7, the warmup spans the checkpoint.
TEST(TrainScheduleTest, ResumeGoesOnWithTheScheduleAndTheAccumulatedGradients) {
  fs::path fixture = fs::path(GXC_SOURCE_DIR) / "tests/fixtures/train/mlp_sgd_accumulate";
  fs::path dir = makeScratchDir("gxc-train-schedule-resume");
  auto options = [&](int64_t epochs, const std::string& name) {
    TrainOptions o;
    o.compile.modelPath = (fixture / "model.yaml").string();
    o.compile.devices = "cpu";
    o.dataPath = (fixture / "train.npz").string();
    o.epochs = epochs;
    o.logPath = (dir / (name + ".jsonl")).string();
    o.savePath = (dir / (name + ".safetensors")).string();
    return o;
  };
  std::ostringstream out, err;
  ASSERT_EQ(trainModel(options(3, "whole"), out, err), 0) << err.str();
  TrainOptions first = options(1, "first");
  first.checkpointDir = (dir / "checkpoints").string();
  ASSERT_EQ(trainModel(first, out, err), 0) << err.str();
  TrainOptions rest = options(3, "rest");
  rest.resumePath = (dir / "checkpoints" / "epoch-1.safetensors").string();
  ASSERT_EQ(trainModel(rest, out, err), 0) << err.str();

  std::vector<nlohmann::json> whole = logLines(dir / "whole.jsonl");
  std::vector<nlohmann::json> resumed = logLines(dir / "first.jsonl");
  for (const nlohmann::json& line : logLines(dir / "rest.jsonl")) resumed.push_back(line);
  ASSERT_EQ(whole.size(), 7u);  // 21 micro-batches
  ASSERT_EQ(resumed.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(resumed[i].at("step"), whole[i].at("step"));
    EXPECT_EQ(resumed[i].at("lr"), whole[i].at("lr")) << "step " << i + 1;
    // Step 3 takes epoch 1's last micro-batch, run before the checkpoint: its logged loss is
    // the mean of the two run after it.
    if (i != 2) {
      EXPECT_EQ(resumed[i].at("loss"), whole[i].at("loss")) << "step " << i + 1;
    }
  }
  std::ifstream a(dir / "whole.safetensors", std::ios::binary),
      b(dir / "rest.safetensors", std::ios::binary);
  std::string wholeBytes((std::istreambuf_iterator<char>(a)), {}),
      restBytes((std::istreambuf_iterator<char>(b)), {});
  EXPECT_FALSE(wholeBytes.empty());
  EXPECT_TRUE(wholeBytes == restBytes) << "the resumed run's params differ from the whole run's";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gxc
