// Where the cuda platform checks embedding indices and cross_entropy targets of GPU ops
// (runtime/cuda/gpu_index_checks.h): decided from the compiled graph alone, so tested in every
// build, GPU or not. Scattered batches are checked in the host's shards, never read back.
#include "runtime/cuda/gpu_index_checks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"

namespace gxc {
namespace {

// An embedding and a cross_entropy reading two inputs straight (through one packed transfer:
// batch-transfers packs the three inputs), and an embedding of indices a GPU computes (a
// concat, which mixes rows, so data-parallel and pipeline run it once on the whole batch).
const char* const kModel = R"(
graph @lookup(%ids: i64[8] @cpu, %t: i64[8] @cpu, %j: i64[4] @cpu) -> (l, f) attributes {seed = 0} {
  %table = param {init = "normal", name = "table", seed = 0} : f32[10,4] @?
  %e = embedding %ids, %table {embedding_dim = 4, num_embeddings = 10} : f32[8,4] @?
  %l = cross_entropy %e, %t : f32[] @?
  %k = concat %j, %j {axis = 0} : i64[8] @?
  %f = embedding %k, %table {embedding_dim = 4, num_embeddings = 10} : f32[8,4] @?
  return %l, %f
})";

// "e.shard0 <- ids.shard0 after-host-op", one line per check, in program order; 0 GPUs: the
// host alone.
std::vector<std::string> checksOf(const std::string& placement, int gpus, int microbatches = 0) {
  auto graph = parseGraph(kModel, "lookup.gxir");
  std::vector<Device> devices;
  for (int i = 0; i < gpus; ++i) devices.push_back(Device::cuda(i));
  if (gpus == 0) devices.push_back(Device::cpu());
  PassContext context;
  context.target = Target::of(devices);
  context.placement = placement;
  context.microbatches = microbatches;
  PassManager(defaultPipeline()).run(*graph, context);
  std::vector<std::string> lines;
  for (const IndexCheck& check : planIndexChecks(*graph)) {
    const char* when = check.when == IndexCheckPoint::RunStart      ? "run-start"
                       : check.when == IndexCheckPoint::AfterHostOp ? "after-host-op"
                                                                    : "read-back";
    lines.push_back(check.consumer->result->name + " <- " + check.source->name + " " + when);
  }
  return lines;
}

TEST(GpuIndexChecksTest, InputsMovedUnchangedAreCheckedWhenTheRunStarts) {
  EXPECT_EQ(
      checksOf("manual", 1),
      (std::vector<std::string>{"e <- ids run-start", "l <- t run-start", "f <- k read-back"}));
}

// data-parallel slices every input on the host, one shard per GPU: each shard is checked on
// the host once the slice exists, before its copy; only the concat's result is read back.
TEST(GpuIndexChecksTest, DataParallelShardsAreCheckedOnTheHostBeforeTheScatter) {
  std::vector<std::string> checks = checksOf("data-parallel", 2);
  EXPECT_EQ(checks,
            (std::vector<std::string>{
                "e.shard0 <- ids.shard0 after-host-op", "e.shard1 <- ids.shard1 after-host-op",
                "l.shard0 <- t.shard0 after-host-op", "l.shard1 <- t.shard1 after-host-op",
                // the mean's denominator, per shard (passes/batch_split.cpp)
                "l.weight_sum.shard0 <- t.shard0 after-host-op",
                "l.weight_sum.shard1 <- t.shard1 after-host-op",
                "f <- k read-back",  // concat mixes rows: once, on cuda:0
            }))
      << ::testing::PrintToString(checks);
}

// pipeline cuts the batch into micro-batches on the host, also on one GPU.
TEST(GpuIndexChecksTest, PipelineMicroBatchesAreCheckedOnTheHostBeforeTheScatter) {
  std::vector<std::string> checks = checksOf("pipeline", 1, 2);
  int onTheHost = 0, readBack = 0;
  for (const std::string& check : checks) {
    onTheHost += check.find("after-host-op") != std::string::npos;
    readBack += check.find("read-back") != std::string::npos;
  }
  // e, l and l's mean denominator (l.weight_sum), per micro-batch
  EXPECT_EQ(onTheHost, 6) << ::testing::PrintToString(checks);
  EXPECT_EQ(readBack, 1) << ::testing::PrintToString(checks);  // f, on the whole batch
  EXPECT_NE(std::find(checks.begin(), checks.end(), "e.mb1 <- ids.mb1 after-host-op"), checks.end())
      << ::testing::PrintToString(checks);
}

TEST(GpuIndexChecksTest, OpsOnTheHostCheckTheirOwnIndices) {
  EXPECT_TRUE(checksOf("manual", 0).empty());
}

}  // namespace
}  // namespace gxc
