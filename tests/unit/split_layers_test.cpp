// split-layers, executed: models whose weights fit no single virtual GPU are split and run
// on 4 of them, giving the host reference's numbers; the pass on its own output changes
// nothing. (The expected IR is tests/lit/split-layers.gxir.)
#include "passes/split_layers.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "output_compare.h"

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

struct Case {
  std::string model;     // under the source tree
  int64_t memoryPerGpu;  // small enough that the largest weights fit no GPU
  int splitLayers;       // layers that must come out split
};

// The case as ctest and GoogleTest name it: the model's file name.
std::string caseName(const Case& c) {
  return c.model.find("mlp") != std::string::npos ? "mlp" : "vbm_small";
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

class SplitLayersTest : public testing::TestWithParam<Case> {};

TEST_P(SplitLayersTest, SplitModelsGiveTheHostsNumbers) {
  const Case& c = GetParam();
  std::string path = std::string(GXC_SOURCE_DIR) + "/" + c.model;
  auto reference = loadModel(path);
  PassContext host;
  PassManager(defaultPipeline()).run(*reference, host);
  std::map<std::string, Tensor> inputs;
  for (const Value* input : reference->inputs())
    inputs[input->name] = defaultInput(*reference, *input, reference->attrs().getInt("seed", 0));
  std::map<std::string, Tensor> expected = ReferenceExecutor(*reference).run(inputs);

  auto graph = loadModel(path);
  PassContext context;
  context.target = Target::withGpuMemory(
      {Device::cuda(0), Device::cuda(1), Device::cuda(2), Device::cuda(3)}, c.memoryPerGpu);
  PassManager(defaultPipeline()).run(*graph, context);
  std::map<std::string, int> shardsOf;
  for (const Op* op : graph->ops())
    if (op->attrs.has("shard_of")) ++shardsOf[op->attrs.getString("shard_of", "")];
  EXPECT_EQ(static_cast<int>(shardsOf.size()), c.splitLayers);
  for (const Op* op : graph->ops())
    EXPECT_FALSE(op->kind == OpKind::Param && op->result->type.bytes() > c.memoryPerGpu)
        << "a whole weight is left: " << op->layerName();
  EXPECT_FALSE(SplitLayersPass().run(*graph, context)) << "split-layers is not idempotent";

  SimConfig config;
  config.gpus = 4;
  config.memoryPerGpu = c.memoryPerGpu;
  std::map<std::string, Tensor> actual = SimExecutor(*graph, config).run(inputs, nullptr);
  // Normwise: the sim runs OpenBLAS GEMMs and sums the reduction shards in another order.
  expectOutputsCloseNormwise(actual, expected, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Models, SplitLayersTest,
    testing::Values(Case{"models/very_big_module_small.yaml", int64_t{600} << 10, 2},
                    Case{"tests/lit/cli/Inputs/split-mlp.yaml", int64_t{1000} << 10, 2}),
    [](const testing::TestParamInfo<Case>& info) { return caseName(info.param); });

}  // namespace
}  // namespace gxc
