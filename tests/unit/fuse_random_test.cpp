// fuse on random graphs: every kernel it makes keeps the rules of ir/fused_kernel.h (the
// verifier says so), it changes nothing the second time, and the reordered graph computes the
// same bits as the original: grouping and moving ops are legal, and fusion happens. That the
// generated kernels compute what fuse forms is fuse_codegen_random_test.cpp's part.
#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "ir/fused_kernel.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/fuse.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"

namespace gxc {
namespace {

// Random graphs of every role: elementwise chains and trees (broadcasts, scalars), anchors
// (reductions to [4,1] and [1,8], softmax, log_softmax, layer_norm), GEMMs with bias adds and
// activations, on the host and cuda:0 (edges between them without copies, as before
// insert-copies: fuse must not join them). Every value is f32[4,8] unless a reduction made it
// smaller; the ops avoid exp, log and sqrt, so no NaN hides a difference.
std::string randomGraphText(std::mt19937& random) {
  auto pick = [&](int count) { return std::uniform_int_distribution<int>(0, count - 1)(random); };
  auto graph = std::make_unique<Graph>("random");
  auto type = [&](Shape shape) {
    return TensorType::of(DType::F32, std::move(shape), pick(3) ? Device::cpu() : Device::cuda(0));
  };
  std::vector<Value*> full = {
      graph->addInput("x", TensorType::of(DType::F32, {4, 8}, Device::cpu())),
      graph->addInput("y", TensorType::of(DType::F32, {4, 8}, Device::cpu()))};
  std::vector<Value*> small;
  Attrs paramAttrs;
  paramAttrs.set("init", std::string("normal"));
  paramAttrs.set("seed", int64_t{1});
  auto param = [&](const std::string& name, Shape shape) {
    Attrs attrs = paramAttrs;
    attrs.set("name", name);
    return graph
        ->appendOp(OpKind::Param, {}, name, TensorType::of(DType::F32, shape, Device::cpu()), attrs)
        ->result;
  };
  Value* weight = param("w", {8, 8});
  Value* bias = param("b", {8});
  auto recent = [&](const std::vector<Value*>& values) {
    int window = std::min<int>(static_cast<int>(values.size()), 4);
    return values[values.size() - 1 - static_cast<size_t>(pick(window))];
  };
  int ops = 1 + pick(40);
  for (int i = 0; i < ops; ++i) {
    std::string name = "v" + std::to_string(i);
    Attrs attrs;
    Value* a = recent(full);
    switch (pick(9)) {
      case 0: {
        const OpKind unary[] = {OpKind::Relu, OpKind::Tanh, OpKind::Sigmoid, OpKind::Neg,
                                OpKind::Gelu};
        OpKind kind = unary[pick(5)];
        if (kind == OpKind::Gelu && pick(2)) attrs.set("approximate", std::string("tanh"));
        full.push_back(graph->appendOp(kind, {a}, name, type({4, 8}), attrs)->result);
        break;
      }
      case 1: {
        const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul};
        full.push_back(
            graph->appendOp(binary[pick(3)], {a, recent(full)}, name, type({4, 8}))->result);
        break;
      }
      case 2:
        attrs.set("scalar", 0.5);
        full.push_back(graph->appendOp(OpKind::Mul, {a}, name, type({4, 8}), attrs)->result);
        break;
      case 3:
        if (small.empty()) continue;
        full.push_back(
            graph->appendOp(OpKind::Add, {a, recent(small)}, name, type({4, 8}))->result);
        break;
      case 4: {
        const OpKind reductions[] = {OpKind::Sum, OpKind::Mean, OpKind::Max};
        int64_t axis = pick(2);
        attrs.set("axis", axis);
        attrs.set("keepdim", true);
        Shape shape = axis == 1 ? Shape{4, 1} : Shape{1, 8};
        Value* reduced =
            graph->appendOp(reductions[pick(3)], {a}, name, type(shape), attrs)->result;
        small.push_back(reduced);
        if (pick(2))  // a tail of the reduction's shape
          small.push_back(
              graph->appendOp(OpKind::Tanh, {reduced}, name + "t", type(shape))->result);
        break;
      }
      case 5: {
        const OpKind anchors[] = {OpKind::Softmax, OpKind::LogSoftmax, OpKind::LayerNorm};
        full.push_back(graph->appendOp(anchors[pick(3)], {a}, name, type({4, 8}))->result);
        break;
      }
      case 6:
        attrs.set("transpose_b", static_cast<bool>(pick(2)));
        full.push_back(
            graph->appendOp(OpKind::Matmul, {a, weight}, name, type({4, 8}), attrs)->result);
        break;
      case 7:
        full.push_back(
            graph->appendOp(OpKind::Add, {pick(2) ? a : full.back(), bias}, name, type({4, 8}))
                ->result);
        break;
      case 8:
        attrs.set("in_features", int64_t{8});
        attrs.set("out_features", int64_t{8});
        full.push_back(
            graph->appendOp(OpKind::Linear, {a, weight, bias}, name, type({4, 8}), attrs)->result);
        break;
    }
  }
  graph->addOutput("last", full.back());
  if (pick(2)) graph->addOutput("other", recent(full));
  if (!small.empty() && pick(2)) graph->addOutput("small", small.back());
  return printGraph(*graph);
}

std::map<std::string, Tensor> runOnHost(std::string text) {
  // The same graph with every device made the host, as the reference runs it.
  for (size_t at = text.find("@cuda:0"); at != std::string::npos; at = text.find("@cuda:0"))
    text.replace(at, 7, "@cpu");
  auto graph = parseGraph(text, "host.gxir");
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph->inputs()) inputs[input->name] = defaultInput(*graph, *input, 5);
  return ReferenceExecutor(*graph).run(inputs);
}

TEST(FuseRandomTest, RandomGraphsKeepTheKernelRulesTheirAnswersAndAreFusedOnce) {
  std::mt19937 random(2024);
  int kernels = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string text = randomGraphText(random);
    SCOPED_TRACE(text);
    auto graph = parseGraph(text, "random.gxir");
    ASSERT_EQ(verifyGraph(*graph), std::vector<std::string>{});
    FusePass().run(*graph, PassContext{});
    ASSERT_EQ(verifyGraph(*graph), std::vector<std::string>{});
    kernels += static_cast<int>(kernelSpans(*graph).size());
    std::string fused = printGraph(*graph);
    EXPECT_FALSE(FusePass().run(*graph, PassContext{}));
    EXPECT_EQ(printGraph(*graph), fused);
    // The reference runs op by op, so the moved ops must give the very same bits.
    std::map<std::string, Tensor> expected = runOnHost(text), actual = runOnHost(fused);
    for (const auto& [name, tensor] : expected)
      EXPECT_EQ(actual.at(name).toFloats(), tensor.toFloats()) << name;
  }
  EXPECT_GT(kernels, 300);  // fusion happens, not only legality
}

}  // namespace
}  // namespace gxc
