// batch-transfers executed: a model compiled by the default pipeline with and without the
// pass gives the same outputs on virtual GPUs, with fewer copies; the pass on its own output
// changes nothing; the size limits follow the cost model.
#include "passes/batch_transfers.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/param_init.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

// Host inputs used on cuda:0 (three f32 of different shapes, one i64), activations crossing
// to cuda:1 together, outputs coming back from both GPUs: 9 copies, 5 once batched.
const char* const kTwoStages = R"(
graph @two_stages(%a: f32[4,8] @cpu, %b: f32[8] @cpu, %c: f32[2,2] @cpu, %ids: i64[4] @cpu) -> (y, s, e) attributes {seed = 7} {
  %table = param {init = "normal", name = "table", seed = 7} : f32[10,8] @cuda:0
  %ab = add %a, %b : f32[4,8] @cuda:0
  %e = embedding %ids, %table {embedding_dim = 8, num_embeddings = 10} : f32[4,8] @cuda:0
  %h = mul %ab, %e : f32[4,8] @cuda:0
  %s = sum %c : f32[] @cuda:0
  %y = add %h, %ab : f32[4,8] @cuda:1
  return %y, %s, %e
}
)";

// `to` layers: copies of copies. The host-to-cuda:0 batch replaces the sources of the
// cuda:0-to-cuda:1 copies and of the outputs' copies, which are batched in a second round:
// 7 copies, 4 once batched.
const char* const kCopiesOfCopies = R"(
graph @chains(%x: f32[4] @cpu, %z: f32[2,2] @cpu) -> (p, q, xs) attributes {seed = 3} {
  %xs = to %x {device = "cuda:0"} : f32[4] @cuda:0
  %zs = to %z {device = "cuda:0"} : f32[2,2] @cuda:0
  %zf = reshape %zs {shape = [4]} : f32[4] @cuda:0
  %p = add %xs, %zf : f32[4] @cuda:1
  %q = mul %xs, %zf : f32[4] @cuda:0
  return %p, %q, %xs
}
)";

// 100 host inputs summed on cuda:0: more uploads than one pack kernel takes arguments, so
// they move in two batches (63 and 37): 101 copies, 3 once batched.
const std::string& manyUploads() {
  static const std::string text = [] {
    std::string inputs, body = "  %s0 = add %i0, %i1 : f32[4] @cuda:0\n";
    for (int i = 0; i < 100; ++i) inputs += (i ? ", " : "") + fmt::format("%i{}: f32[4] @cpu", i);
    for (int i = 2; i < 100; ++i)
      body += fmt::format("  %s{} = add %s{}, %i{} : f32[4] @cuda:0\n", i - 1, i - 2, i);
    return fmt::format("graph @many({}) -> (s98) {{\n{}  return %s98\n}}\n", inputs, body);
  }();
  return text;
}

struct Case {
  const char* name;
  const char* text;
  int64_t copies;
  int64_t batchedCopies;
};

const Case kCases[] = {{"two_stages", kTwoStages, 9, 5},
                       {"copies_of_copies", kCopiesOfCopies, 7, 4},
                       {"many_uploads", manyUploads().c_str(), 101, 3}};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<std::string> pipelineWith(bool batched) {
  std::vector<std::string> passes = defaultPipeline();
  passes.erase(std::remove(passes.begin(), passes.end(), "batch-transfers"), passes.end());
  if (batched)
    passes.insert(std::find(passes.begin(), passes.end(), "insert-copies") + 1, "batch-transfers");
  return passes;
}

struct SimRun {
  std::map<std::string, Tensor> outputs;
  int64_t copies = 0;
  std::string ir;
};

SimRun compileAndRun(const char* text, bool batched) {
  std::unique_ptr<Graph> graph = parseGraph(text, "model.gxir");
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph->inputs())
    inputs[input->name] = defaultInput(*graph, *input, graph->attrs().getInt("seed", 0));
  PassContext context;
  context.target = Target::of({Device::cuda(0), Device::cuda(1)});
  PassManager manager;
  for (const std::string& pass : pipelineWith(batched)) {
    if (pass == "batch-transfers")
      manager.add(std::make_unique<BatchTransfersPass>());
    else
      manager.add(pass);
  }
  manager.run(*graph, context);
  SimConfig config;
  config.gpus = 2;
  SimRunReport report;
  SimRun run;
  run.outputs = SimExecutor(*graph, config).run(inputs, &report);
  for (const SimDeviceReport& device : report.devices) run.copies += device.copiesIn;
  run.ir = printGraph(*graph);
  return run;
}

class BatchTransfersRunTest : public testing::TestWithParam<Case> {};

TEST_P(BatchTransfersRunTest, SameOutputsWithFewerCopiesOnVirtualGpus) {
  SimRun plain = compileAndRun(GetParam().text, false);
  SimRun batched = compileAndRun(GetParam().text, true);
  EXPECT_EQ(plain.copies, GetParam().copies) << plain.ir;
  EXPECT_EQ(batched.copies, GetParam().batchedCopies) << batched.ir;
  ASSERT_EQ(batched.outputs.size(), plain.outputs.size());
  for (const auto& [name, want] : plain.outputs) {
    const Tensor& got = batched.outputs.at(name);
    ASSERT_EQ(got.shape(), want.shape()) << name;
    ASSERT_EQ(got.dtype(), want.dtype()) << name;
    // Packing and unpacking move bytes, never arithmetic: the outputs are the same bits.
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << name;
  }
}

TEST_P(BatchTransfersRunTest, SecondRunChangesNothing) {
  std::unique_ptr<Graph> graph = parseGraph(GetParam().text, "model.gxir");
  PassContext context;
  context.target = Target::of({Device::cuda(0), Device::cuda(1)});
  PassManager manager;
  for (const char* pass : {"infer-shapes", "assign-devices", "insert-copies"}) manager.add(pass);
  manager.run(*graph, context);
  BatchTransfersPass pass;
  EXPECT_TRUE(pass.run(*graph, context));
  std::string once = printGraph(*graph);
  EXPECT_FALSE(pass.run(*graph, context));
  EXPECT_EQ(printGraph(*graph), once);
  // Reparsed, the batches are still recognized as this pass's own.
  std::unique_ptr<Graph> reparsed = parseGraph(once, "once.gxir");
  EXPECT_FALSE(pass.run(*reparsed, context));
}

INSTANTIATE_TEST_SUITE_P(Models, BatchTransfersRunTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(BatchTransfersTest, SizeLimitsFollowTheCostModel) {
  // What a member saves (5 us of latency; its unpacking is a view) against what each byte
  // costs: toward a GPU the staging memcpy and the host's concat, 2.98 ns; toward the host the
  // memcpy out of staging and the GPU's concat, 0.126 ns; over NVLink 3.3 ps (see the .cpp).
  const CostTable& costs = h100SxmCosts();
  EXPECT_NEAR(maxBatchedCopyBytes(Device::cpu(), Device::cuda(0), costs), 1676, 1);
  EXPECT_NEAR(maxBatchedCopyBytes(Device::cuda(0), Device::cpu(), costs), 39787, 1);
  EXPECT_NEAR(maxBatchedCopyBytes(Device::cuda(0), Device::cuda(1), costs), 1515957, 1);
  // They follow the table the pass is given: a host that copies faster batches more.
  CostTable fastHost = costs;
  fastHost.hostMemcpyBytesPerSecond *= 2;
  EXPECT_GT(maxBatchedCopyBytes(Device::cuda(0), Device::cpu(), fastHost),
            maxBatchedCopyBytes(Device::cuda(0), Device::cpu(), costs));
}

// The pack is one generated concat kernel, which takes at most kMaxKernelArgs - 1 inputs: 100
// small host inputs bound for cuda:0 move in two batches (63 and 37), not one the kernels
// cannot pack, and the outputs are the same bits.
TEST(BatchTransfersTest, ABatchHasNoMoreMembersThanAKernelTakesInputs) {
  std::string text = "graph @many(";
  std::string body, outputs;
  for (int i = 0; i < 100; ++i) {
    text += fmt::format("{}%x{}: f32[4] @cpu", i ? ", " : "", i);
    body += fmt::format("  %r{0} = relu %x{0} : f32[4] @cuda:0\n", i);
    outputs += fmt::format("{}%r{}", i ? ", " : "", i);
  }
  text += ") -> (";
  for (int i = 0; i < 100; ++i) text += fmt::format("{}r{}", i ? ", " : "", i);
  text += ") {\n" + body + "  return " + outputs + "\n}\n";
  SimRun plain = compileAndRun(text.c_str(), false);
  SimRun batched = compileAndRun(text.c_str(), true);
  EXPECT_NE(batched.ir.find("%batch1.cuda0 = copy"), std::string::npos) << batched.ir;
  EXPECT_EQ(batched.ir.find("%batch2.cuda0 = copy"), std::string::npos) << batched.ir;
  EXPECT_LT(batched.copies, plain.copies);
  for (const auto& [name, want] : plain.outputs)
    EXPECT_EQ(std::memcmp(batched.outputs.at(name).data(), want.data(), want.nbytes()), 0) << name;
}

}  // namespace
}  // namespace gxc
