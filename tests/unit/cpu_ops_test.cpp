// Runs every case of tests/fixtures/ops.json through the whole host path of `--devices cpu`:
// a graph built as the frontend would build it (the case's tensors as graph inputs, or as
// params loaded from a weights file where the op creates params), the default pipeline, then
// HostExecutor with the `cpu` kernels: GEMMs through oneDNN (f64: OpenBLAS), every other op through
// its generated CUDA C++ kernel compiled for the host. reference_ops_test.cpp checks the
// interpreter alone on the same cases (and that they cover every op); this checks that every op
// also runs, and gives the same numbers, on the cpu platform.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "tensor/safetensors.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

using fixtures::allOpCases;
using fixtures::OpCase;

// Which operands of `kind` are params the layer creates (or, for the losses, the class
// weights its `weight:` or `pos_weight:` names) rather than tensors the model passes in.
bool isParamOperand(OpKind kind, size_t index) {
  switch (kind) {
    case OpKind::Linear:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
    case OpKind::GroupNorm:
    case OpKind::Conv2d:
    case OpKind::ConvTranspose2d:
      return index >= 1;  // weight, bias
    case OpKind::BatchNorm:
      return index >= 1;  // running_mean, running_var, weight, bias
    case OpKind::Embedding:
      return index == 1;  // weight
    case OpKind::CrossEntropy:
    case OpKind::NllLoss:
    case OpKind::BceWithLogits:
      return index == 2;  // class weights, pos_weight
    default:
      return false;
  }
}

class CpuOpTest : public testing::TestWithParam<OpCase> {};

TEST_P(CpuOpTest, MatchesNumPy) {
  const OpCase& c = GetParam();
  auto kind = parseOpKind(c.op);
  ASSERT_TRUE(kind.has_value()) << "unknown op " << c.op;

  // Params are materialized from a weights file, as `gxc run --weights` does.
  std::string weightsPath = testing::TempDir() + "cpu_ops_" + c.name + ".safetensors";
  std::map<std::string, Tensor> weights;
  Graph graph("case_" + c.name);
  std::vector<Value*> operands;
  std::map<std::string, Tensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const fixtures::FixtureTensor& in = c.inputs[i];
    std::string name = "in" + std::to_string(i);
    if (isParamOperand(*kind, i)) {
      Attrs attrs;
      attrs.set("init", std::string("file"));
      attrs.set("file", weightsPath);
      attrs.set("name", name);
      attrs.set("seed", int64_t{0});
      // Unplaced, as the frontend leaves a param: assign-devices puts it by its consumer.
      operands.push_back(
          graph.appendOp(OpKind::Param, {}, name, TensorType::of(in.dtype, in.shape), attrs)
              ->result);
      weights[name] = fixtures::toTensor(in);
    } else {
      operands.push_back(graph.addInput(name, TensorType::of(in.dtype, in.shape, Device::cpu())));
      inputs[name] = fixtures::toTensor(in);
    }
  }
  if (!weights.empty()) writeSafetensors(weightsPath, weights);

  Attrs attrs = fixtures::toAttrs(c.attrs);
  // The result is untyped, for infer-shapes to type; only `to` names its device, as in the
  // frontend (a `to cuda:1` falls back to the host on this GPU-less run).
  Device device;
  if (*kind == OpKind::To) device = *parseDevice(attrs.getString("device", "cpu"));
  Op* op =
      graph.appendOp(*kind, operands, "layer", TensorType{false, DType::F32, {}, device}, attrs);
  graph.addOutput("out", op->result);

  PassManager(defaultPipeline()).run(graph, PassContext{});
  ASSERT_TRUE(op->result->type.known);
  EXPECT_EQ(op->result->type.device, Device::cpu());

  HostExecutor executor(graph);
  std::map<std::string, Tensor> outputs = executor.run(inputs);
  ASSERT_EQ(outputs.count("out"), 1u);
  fixtures::expectMatchesFixture(outputs.at("out"), c.expected, c.name);
  std::filesystem::remove(weightsPath);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CpuOpTest, testing::ValuesIn(allOpCases()),
                         [](const testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace gxc
