// Training as model.train() runs it (passes/train_mode.h): dropout's masks, drawn by the
// generated kernel as the reference interpreter draws them, with the statistics of
// nn.Dropout, a new mask every step, and the same mask wherever the batch's rows run; and a
// model with batch_norm and dropout trained on every placement and resumed, to the same
// losses. (tests/unit/train_pytorch_test.cpp checks batch_norm's training against PyTorch.)
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/reference/reference_executor.h"
#include "tensor/safetensors.h"
#include "tests/unit/scratch_dir.h"
#include "tools/driver/train_command.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kElements = 100000;

// dropout(x, step) over x = 1, 2, ..., run on the host's generated kernel and on the
// reference interpreter; both results.
struct Masks {
  Tensor host, reference;
};

Masks dropout(double p, int64_t seed, int64_t step, int64_t offset = 0) {
  Graph graph("dropout");
  Value* x = graph.addInput("x", TensorType::of(DType::F32, {kElements}, Device::cpu()));
  Value* count = graph.addInput("step", TensorType::of(DType::I64, {}, Device::cpu()));
  Attrs attrs;
  attrs.set("p", p);
  attrs.set("seed", seed);
  attrs.set("mask_offset", offset);
  Op* op = graph.appendOp(OpKind::Dropout, {x, count}, "drop",
                          TensorType{false, DType::F32, {}, {}}, attrs);
  graph.addOutput("out", op->result);
  PassManager(defaultPipeline()).run(graph, PassContext{});

  Tensor values(DType::F32, {kElements});
  for (int64_t i = 0; i < kElements; ++i) values.storeDouble(i, static_cast<double>(i + 1));
  Tensor stepTensor(DType::I64, {});
  stepTensor.storeInt(0, step);
  std::map<std::string, Tensor> inputs{{"x", values}, {"step", stepTensor}};
  HostExecutor host(graph);
  ReferenceExecutor reference(graph);
  return {host.run(inputs).at("out"), reference.run(inputs).at("out")};
}

std::vector<bool> keptOf(const Tensor& out) {
  std::vector<bool> kept(out.numel());
  for (int64_t i = 0; i < out.numel(); ++i) kept[i] = out.loadDouble(i) != 0.0;
  return kept;
}

TEST(DropoutMaskTest, GeneratedKernelDrawsTheReferenceMaskWithNnDropoutsStatistics) {
  for (double p : {0.1, 0.5, 0.9}) {
    SCOPED_TRACE(p);
    Masks masks = dropout(p, 1234, 0);
    int64_t kept = 0;
    for (int64_t i = 0; i < kElements; ++i) {
      double ours = masks.host.loadDouble(i), theirs = masks.reference.loadDouble(i);
      // The same elements kept; a kept one is x / (1 - p), in f32 either way.
      ASSERT_EQ(ours != 0.0, theirs != 0.0) << "element " << i;
      ASSERT_NEAR(ours, theirs, 1e-6 * std::abs(theirs)) << "element " << i;
      if (ours == 0.0) continue;
      ++kept;
      EXPECT_NEAR(ours, static_cast<double>(i + 1) / (1.0 - p), 1e-6 * ours) << "element " << i;
    }
    // Each element is kept with probability 1 - p: within 5 standard deviations.
    double sigma = std::sqrt(p * (1 - p) / kElements);
    EXPECT_NEAR(static_cast<double>(kept) / kElements, 1.0 - p, 5 * sigma);
  }
}

TEST(DropoutMaskTest, EachStepAndEachSeedDrawsAnotherMaskAndTheSameOnesAgain) {
  std::vector<bool> first = keptOf(dropout(0.5, 7, 0).host);
  EXPECT_EQ(keptOf(dropout(0.5, 7, 0).host), first);
  for (auto [seed, step] : {std::pair<int64_t, int64_t>{7, 1}, {8, 0}}) {
    std::vector<bool> other = keptOf(dropout(0.5, seed, step).host);
    int64_t same = 0;
    for (int64_t i = 0; i < kElements; ++i) same += other[i] == first[i];
    // Independent masks at p = 0.5 agree on half the elements.
    EXPECT_NEAR(static_cast<double>(same) / kElements, 0.5, 0.01) << seed << " " << step;
  }
}

// A piece of the batch starting at element `offset` keeps what the whole batch keeps there.
TEST(DropoutMaskTest, OffsetContinuesTheWholeBatchsMask) {
  std::vector<bool> whole = keptOf(dropout(0.3, 99, 4).host);
  std::vector<bool> shifted = keptOf(dropout(0.3, 99, 4, 1000).host);
  for (int64_t i = 0; i + 1000 < kElements; ++i)
    ASSERT_EQ(shifted[i], whole[i + 1000]) << "element " << i;
}

TEST(DropoutMaskTest, ZeroAndOneKeepAllAndNone) {
  Masks all = dropout(0.0, 3, 0);
  Masks none = dropout(1.0, 3, 0);
  for (int64_t i = 0; i < kElements; i += 997) {
    EXPECT_EQ(all.host.loadDouble(i), static_cast<double>(i + 1));
    EXPECT_EQ(none.host.loadDouble(i), 0.0);
  }
}

// models/digits_bn.yaml (batch_norm and dropout) on the PyTorch case's data: 360 samples in
// batches of 128, 128 and 104.
class TrainModeModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = makeScratchDir(
        "gxc-train-mode-" +
        std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  TrainOptions options(const std::string& tag) const {
    TrainOptions o;
    o.compile.modelPath = (fs::path(GXC_SOURCE_DIR) / "models/digits_bn.yaml").string();
    o.dataPath =
        (fs::path(GXC_SOURCE_DIR) / "tests/fixtures/train/digits_bn_sgd/train.npz").string();
    o.epochs = 2;
    o.logPath = (dir_ / (tag + ".jsonl")).string();
    o.savePath = (dir_ / (tag + ".safetensors")).string();
    return o;
  }

  static std::vector<double> losses(const std::string& path) {
    std::vector<double> values;
    std::ifstream log(path);
    for (std::string line; std::getline(log, line);)
      values.push_back(nlohmann::json::parse(line).at("loss").get<double>());
    return values;
  }

  fs::path dir_;
};

// The masks are drawn by the whole batch's element index and the statistics are the whole
// batch's, so every placement trains the same model: data-parallel on 2 and 3 GPUs (shards
// of 43, 43 and 42 rows, then 35, 35 and 34) and pipelines of micro-batches.
TEST_F(TrainModeModelTest, EveryPlacementTrainsTheSameModel) {
  std::ostringstream out, err;
  TrainOptions cpu = options("cpu");
  ASSERT_EQ(trainModel(cpu, out, err), 0) << err.str();
  std::vector<double> expected = losses(cpu.logPath);
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_LT(expected.back(), expected.front());
  SafetensorsFile reference = SafetensorsFile::open(cpu.savePath);
  EXPECT_EQ(reference.read("bn1.num_batches_tracked").loadInt(0), 6);

  struct Placement {
    const char* tag;
    const char* devices;
    const char* sim;
    const char* placement;
  };
  for (const Placement& p : {Placement{"dp2", "0,1", "2", "data-parallel"},
                             Placement{"dp3", "0,1,2", "3", "data-parallel"},
                             Placement{"pipeline", "0,1", "2", "pipeline"}}) {
    SCOPED_TRACE(p.tag);
    TrainOptions o = options(p.tag);
    o.compile.devices = p.devices;
    o.compile.simGpus = p.sim;
    o.compile.placement = p.placement;
    ASSERT_EQ(trainModel(o, out, err), 0) << err.str();
    std::vector<double> ours = losses(o.logPath);
    ASSERT_EQ(ours.size(), expected.size());
    for (size_t i = 0; i < ours.size(); ++i)
      EXPECT_NEAR(ours[i], expected[i], 1e-5 * std::abs(expected[i])) << "step " << i + 1;
    SafetensorsFile trained = SafetensorsFile::open(o.savePath);
    for (const auto& [name, entry] : reference.entries()) {
      Tensor a = trained.read(name), b = reference.read(name);
      for (int64_t i = 0; i < b.numel(); ++i)
        ASSERT_NEAR(a.loadDouble(i), b.loadDouble(i), 1e-5 * (1 + std::abs(b.loadDouble(i))))
            << name << " element " << i;
    }
  }
}

// The step count the masks are drawn for is in the checkpoint: a resumed run draws the masks
// the uninterrupted one drew, and its losses are the same to the bit.
TEST_F(TrainModeModelTest, ResumeDrawsTheMasksTheUninterruptedRunDrew) {
  std::ostringstream out, err;
  TrainOptions whole = options("whole");
  whole.epochs = 3;
  ASSERT_EQ(trainModel(whole, out, err), 0) << err.str();
  TrainOptions first = options("first");
  first.epochs = 1;
  first.checkpointDir = (dir_ / "checkpoints").string();
  ASSERT_EQ(trainModel(first, out, err), 0) << err.str();
  TrainOptions rest = options("rest");
  rest.epochs = 3;
  rest.resumePath = (dir_ / "checkpoints" / "epoch-1.safetensors").string();
  ASSERT_EQ(trainModel(rest, out, err), 0) << err.str();
  std::vector<double> uninterrupted = losses(whole.logPath), resumed = losses(rest.logPath);
  ASSERT_EQ(uninterrupted.size(), 9u);
  ASSERT_EQ(resumed.size(), 6u);
  for (size_t i = 0; i < resumed.size(); ++i)
    EXPECT_EQ(resumed[i], uninterrupted[i + 3]) << "step " << i + 4;
  SafetensorsFile checkpoint = SafetensorsFile::open(first.checkpointDir + "/epoch-1.safetensors");
  EXPECT_EQ(checkpoint.read("train.step").loadInt(0), 3);
}

}  // namespace
}  // namespace gxc
