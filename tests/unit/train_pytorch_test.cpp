// `gxc train` against PyTorch: tests/fixtures/make_train_fixtures.py trained each case's model
// from init.safetensors on train.npz, in the file's order, with torch.optim, and recorded every
// step's loss (expected.json) and the final params (final.safetensors). gxc trains the same
// model from the same weights on the same data, on each platform and placement below: every
// step's loss within 1e-4 (relative) of PyTorch's, every final param within 1e-4 (relative to
// its largest magnitude), but for the elements the fixtures name noise-driven (GPT's key bias,
// whose gradient is zero but for rounding), which are only bounded.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuda_test_helpers.h"
#include "tensor/safetensors.h"
#include "tests/unit/scratch_dir.h"
#include "tools/driver/train_command.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

struct Platform {
  std::string name;
  std::string devices;
  std::string simGpus;
  std::string placement = "manual";
  int microbatches = 0;
};

// Batches of 128 and a last one of 104: two data-parallel shards of 64 (then 52), three of 43,
// 43 and 42 (then 35, 35 and 34), whose losses and gradients the split must weight by rows;
// and pipelines of 2 and 3 micro-batches.
const Platform kPlatforms[] = {
    {"cpu", "cpu", ""},
    {"sim1", "0", "1"},
    {"sim2auto", "0,1", "2", "auto"},
    {"sim2dp", "0,1", "2", "data-parallel"},
    {"sim3dp", "0,1,2", "3", "data-parallel"},
    {"sim2pipeline", "0,1", "2", "pipeline"},
    {"sim2pipeline3mb", "0,1", "2", "pipeline", 3},
};

fs::path caseDir(const std::string& name) {
  return fs::path(GXC_SOURCE_DIR) / "tests/fixtures/train" / name;
}

double maxAbs(const Tensor& tensor) {
  double largest = 0;
  for (int64_t i = 0; i < tensor.numel(); ++i)
    largest = std::max(largest, std::abs(tensor.loadDouble(i)));
  return largest;
}

void expectTrainsAsPyTorch(const std::string& name, const Platform& platform) {
  SCOPED_TRACE(name + " on " + platform.name);
  fs::path dir = caseDir(name);
  nlohmann::json expected = nlohmann::json::parse(std::ifstream(dir / "expected.json"));
  fs::path out = makeScratchDir("gxc-train-" + name + "-" + platform.name);

  TrainOptions options;
  options.compile.modelPath = (dir / "model.yaml").string();
  options.compile.devices = platform.devices;
  options.compile.simGpus = platform.simGpus;
  options.compile.placement = platform.placement;
  options.compile.microbatches = platform.microbatches;
  options.dataPath = (dir / "train.npz").string();
  options.noShuffle = true;
  options.epochs = expected.at("epochs").get<int64_t>();
  options.logPath = (out / "log.jsonl").string();
  options.savePath = (out / "trained.safetensors").string();
  std::ostringstream stdoutText, stderrText;
  ASSERT_EQ(trainModel(options, stdoutText, stderrText), 0) << stderrText.str();

  std::ifstream log(options.logPath);
  std::string line;
  size_t step = 0;
  const nlohmann::json& steps = expected.at("steps");
  while (std::getline(log, line)) {
    ASSERT_LT(step, steps.size()) << "more steps than PyTorch took";
    nlohmann::json logged = nlohmann::json::parse(line);
    double loss = logged.at("loss").get<double>();
    double reference = steps[step].at("loss").get<double>();
    EXPECT_NEAR(loss, reference, 1e-4 * std::max(1.0, std::abs(reference))) << "step " << step + 1;
    // With a schedule, the lr each step used (--log says it) is torch's scheduler's.
    if (steps[step].contains("lr")) {
      double lr = steps[step].at("lr").get<double>();
      EXPECT_NEAR(logged.at("lr").get<double>(), lr, 1e-6 * lr + 1e-15) << "step " << step + 1;
    }
    ++step;
  }
  EXPECT_EQ(step, steps.size());

  // Elements whose gradient is zero but for rounding (expected.json, "noise_driven") move by
  // Adam's normalized noise, up to lr per step either way, in PyTorch as in gxc: bounded only.
  double noiseBound = 2.0 * static_cast<double>(steps.size()) * expected.at("lr").get<double>();
  SafetensorsFile trained = SafetensorsFile::open(options.savePath);
  SafetensorsFile reference = SafetensorsFile::open((dir / "final.safetensors").string());
  EXPECT_EQ(trained.entries().size(), reference.entries().size());
  for (const auto& [param, entry] : reference.entries()) {
    ASSERT_TRUE(trained.contains(param)) << param;
    Tensor ours = trained.read(param);
    Tensor theirs = reference.read(param);
    ASSERT_EQ(ours.shape(), theirs.shape()) << param;
    std::vector<bool> noiseDriven(theirs.numel(), false);
    if (expected.at("noise_driven").contains(param))
      for (const auto& range : expected.at("noise_driven").at(param))
        for (int64_t i = range.at(0).get<int64_t>(); i < range.at(1).get<int64_t>(); ++i)
          noiseDriven.at(i) = true;
    double scale = std::max(1e-3, maxAbs(theirs));
    double worst = 0;
    for (int64_t i = 0; i < theirs.numel(); ++i) {
      double difference = std::abs(ours.loadDouble(i) - theirs.loadDouble(i));
      if (noiseDriven[i])
        EXPECT_LE(difference, noiseBound) << param << " element " << i;
      else
        worst = std::max(worst, difference / scale);
    }
    EXPECT_LE(worst, 1e-4) << param;
  }
  fs::remove_all(out);
}

const std::vector<std::string> kCases = {"mlp_adam",
                                         "mlp_adamw",
                                         "digits_sgd",
                                         "digits_sgd_dampening",
                                         "digits_sgd_nesterov",
                                         "digits_lenet_sgd",
                                         "digits_bn_sgd",
                                         "cnn_sgd",
                                         "cnn_adamw",
                                         "gpt_adamw"};

class TrainPyTorchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainPyTorchTest, LossesAndFinalParamsMatchPyTorch) {
  for (const Platform& platform : kPlatforms) expectTrainsAsPyTorch(GetParam(), platform);
}

INSTANTIATE_TEST_SUITE_P(Cases, TrainPyTorchTest, ::testing::ValuesIn(kCases));

// What a training loop adds to the step: learning-rate schedules (per step and per epoch),
// gradient clipping (2-norm, inf-norm) and accumulation over micro-batches. Each on the host
// and on two data-parallel virtual GPUs, whose replicas must all see the scalars the driver
// writes and clip by the norm of the summed gradients.
const std::vector<std::string> kLoopCases = {
    "mlp_sgd_warmup_cosine", "mlp_adamw_one_cycle", "mlp_adam_step_epoch", "mlp_sgd_clip",
    "mlp_adam_clip_inf",     "mlp_sgd_accumulate",  "mlp_adam_accumulate"};

class TrainLoopVsPyTorchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainLoopVsPyTorchTest, LossesLrsAndFinalParamsMatchPyTorch) {
  for (const Platform& platform : {kPlatforms[0], kPlatforms[3]})
    expectTrainsAsPyTorch(GetParam(), platform);
}

INSTANTIATE_TEST_SUITE_P(Cases, TrainLoopVsPyTorchTest, ::testing::ValuesIn(kLoopCases));

// The same cases on one real GPU (skipped, saying so, where there is none): the step's GEMMs
// through cuBLASLt in full f32, the rest as generated kernels, the update written into the
// params where they live on the GPU.
class TrainOnGpuTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainOnGpuTest, LossesAndFinalParamsMatchPyTorch) {
  GXC_REQUIRE_GPUS(1);
  expectTrainsAsPyTorch(GetParam(), {"gpu", "0", ""});
}

INSTANTIATE_TEST_SUITE_P(Cases, TrainOnGpuTest, ::testing::ValuesIn(kCases));
// The loop's cases too: the scalars the driver writes before each step (the lr, whether the
// update applies) reach the params on the GPU.
INSTANTIATE_TEST_SUITE_P(LoopCases, TrainOnGpuTest, ::testing::ValuesIn(kLoopCases));

}  // namespace
}  // namespace gxc
