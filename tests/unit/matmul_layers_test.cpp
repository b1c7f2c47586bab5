// `matmul` layers with torch.matmul's full shapes (tests/fixtures/matmul_layers.json: 1-D
// operands, batch dims of any rank that broadcast), each as a one-layer model read by the
// frontend, which lowers it to views around the IR's 2-D or 3-D matmul: its result must be
// torch.matmul's on the reference interpreter, on the cpu platform (oneDNN) and on a sim GPU.
// The IR the frontend writes is checked too: layers the IR's matmul takes stay one op.
#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/model_loader.h"
#include "ir/diagnostic.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

using fixtures::FixtureTensor;

struct MatmulCase {
  std::string name;
  nlohmann::json attrs;
  FixtureTensor a, b, expected;
};

void PrintTo(const MatmulCase& c, std::ostream* out) { *out << c.name; }

FixtureTensor readTensor(const nlohmann::json& j) {
  return {*parseDType(j.at("dtype").get<std::string>()), j.at("shape").get<Shape>(), j.at("data")};
}

std::vector<MatmulCase> loadCases() {
  std::ifstream file(std::string(GXC_FIXTURE_DIR) + "/matmul_layers.json");
  if (!file) return {};
  std::vector<MatmulCase> cases;
  nlohmann::json root = nlohmann::json::parse(file);
  for (const nlohmann::json& c : root.at("cases"))
    cases.push_back({c.at("name").get<std::string>(), c.at("attrs"),
                     readTensor(c.at("inputs").at(0)), readTensor(c.at("inputs").at(1)),
                     readTensor(c.at("expected"))});
  return cases;
}

const std::vector<MatmulCase>& allCases() {
  static const std::vector<MatmulCase> cases = loadCases();
  return cases;
}

std::string modelOf(const MatmulCase& c) {
  std::string attrs;
  for (const auto& [key, value] : c.attrs.items())
    attrs += fmt::format(", {}: {}", key, value.dump());
  return fmt::format(
      "gxc: 1\nname: matmul_{}\ninputs:\n  a: {{shape: [{}], dtype: {}}}\n"
      "  b: {{shape: [{}], dtype: {}}}\n"
      "layers:\n  - {{name: y, op: matmul, inputs: [a, b]{}}}\noutputs: [y]\n",
      c.name, fmt::join(c.a.shape, ", "), dtypeName(c.a.dtype), fmt::join(c.b.shape, ", "),
      dtypeName(c.b.dtype), attrs);
}

std::unique_ptr<Graph> compiled(const MatmulCase& c, std::vector<Device> devices) {
  auto graph = loadModelFromString(modelOf(c), "matmul_" + c.name + ".yaml", GXC_SOURCE_DIR);
  PassContext context;
  context.target = Target::of(std::move(devices));
  PassManager(defaultPipeline()).run(*graph, context);
  return graph;
}

class MatmulLayerTest : public testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulLayerTest, MatchesTorchMatmulOnEveryPlatform) {
  const MatmulCase& c = GetParam();
  std::map<std::string, Tensor> inputs = {{"a", fixtures::toTensor(c.a)},
                                          {"b", fixtures::toTensor(c.b)}};
  {
    SCOPED_TRACE("reference");
    auto graph = compiled(c, {Device::cpu()});
    fixtures::expectMatchesFixture(ReferenceExecutor(*graph).run(inputs).at("y"), c.expected);
  }
  {
    SCOPED_TRACE("cpu");
    auto graph = compiled(c, {Device::cpu()});
    fixtures::expectMatchesFixture(HostExecutor(*graph).run(inputs).at("y"), c.expected);
  }
  {
    SCOPED_TRACE("sim");
    auto graph = compiled(c, {Device::cuda(0)});
    SimConfig config;
    config.gpus = 1;
    fixtures::expectMatchesFixture(SimExecutor(*graph, config).run(inputs).at("y"), c.expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MatmulLayerTest, testing::ValuesIn(allCases()),
                         [](const testing::TestParamInfo<MatmulCase>& info) {
                           return info.param.name;
                         });

TEST(MatmulLayerFixtures, ArePresent) {
  EXPECT_GE(allCases().size(), 30u);
  EXPECT_TRUE(std::any_of(allCases().begin(), allCases().end(),
                          [](const MatmulCase& c) { return c.a.dtype == DType::F64; }));
}

// How the frontend writes such layers: one op where the IR's matmul takes the operands as they
// are; views around one matmul, and an expand only where batch dims repeat, otherwise.
TEST(MatmulLayerLowering, KeepsWhatTheIrTakesAndAddsViewsOtherwise) {
  auto opsOf = [](const std::string& a, const std::string& b) {
    std::string text = fmt::format(
        "gxc: 1\nname: m\ninputs:\n  a: {{shape: {}}}\n  b: {{shape: {}}}\nlayers:\n"
        "  - {{name: y, op: matmul, inputs: [a, b]}}\noutputs: [y]\n",
        a, b);
    auto graph = loadModelFromString(text, "m.yaml", GXC_SOURCE_DIR);
    std::vector<std::string> ops;
    for (const Op* op : graph->ops())
      ops.push_back(fmt::format("{} {}{}", opName(op->kind), op->result->name,
                                shapeString(op->result->type.shape)));
    return ops;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(opsOf("[3, 4]", "[4, 5]"), (V{"matmul y[3,5]"}));
  EXPECT_EQ(opsOf("[2, 3, 4]", "[4, 5]"), (V{"matmul y[2,3,5]"}));
  EXPECT_EQ(opsOf("[1, 3, 4]", "[2, 4, 5]"), (V{"matmul y[2,3,5]"}));
  EXPECT_EQ(opsOf("[4]", "[4, 5]"), (V{"reshape y.a[1,4]", "matmul y.mm[1,5]", "reshape y[5]"}));
  EXPECT_EQ(opsOf("[4]", "[4]"),
            (V{"reshape y.a[1,4]", "reshape y.b[4,1]", "matmul y.mm[1,1]", "reshape y[]"}));
  EXPECT_EQ(opsOf("[2, 1, 4, 5]", "[3, 5, 6]"),
            (V{"expand y.a_expanded[2,3,4,5]", "reshape y.a[6,4,5]", "expand y.b_expanded[2,3,5,6]",
               "reshape y.b[6,5,6]", "matmul y.mm[6,4,6]", "reshape y[2,3,4,6]"}));
  EXPECT_EQ(opsOf("[2, 3, 4, 5]", "[5, 6]"),
            (V{"reshape y.a[6,4,5]", "matmul y.mm[6,4,6]", "reshape y[2,3,4,6]"}));
}

}  // namespace
}  // namespace gxc
