// Checks the reference interpreter against tests/fixtures/ops.json, whose expected values
// make_op_fixtures.py computes independently (f32 in NumPy, f16 and bf16 by PyTorch), and checks
// its runtime errors.
#include "runtime/reference/reference_ops.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

using fixtures::allOpCases;
using fixtures::OpCase;

class ReferenceOpTest : public testing::TestWithParam<OpCase> {};

TEST_P(ReferenceOpTest, MatchesNumPy) {
  const OpCase& c = GetParam();
  auto kind = parseOpKind(c.op);
  ASSERT_TRUE(kind.has_value()) << "unknown op " << c.op;

  Graph graph("case");
  std::vector<Value*> operands;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const fixtures::FixtureTensor& in = c.inputs[i];
    operands.push_back(graph.addInput("in" + std::to_string(i),
                                      TensorType::of(in.dtype, in.shape, Device::cpu())));
    inputs.push_back(fixtures::toTensor(in));
  }
  const fixtures::FixtureTensor& want = c.expected;
  Op* op = graph.appendOp(*kind, operands, "layer",
                          TensorType::of(want.dtype, want.shape, Device::cpu()),
                          fixtures::toAttrs(c.attrs));
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(&t);

  fixtures::expectMatchesFixture(evaluateReferenceOp(*op, pointers), want, c.name);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReferenceOpTest, testing::ValuesIn(allOpCases()),
                         [](const testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

TEST(ReferenceOpFixtures, FixtureIsPresent) {
  // Every op kind a model can use (everything but param) has at least one case.
  ASSERT_GE(allOpCases().size(), 60u) << "tests/fixtures/ops.json is missing or too small";
  for (std::string_view name : modelOpNames()) {
    // split and chunk never reach the IR: the frontend makes them slices (model tests run
    // them). topk's values are an op of their own.
    OpKind kind = *parseOpKind(name);
    if (isMultiResultLayer(kind) && kind != OpKind::Topk) continue;
    bool covered = false;
    for (const OpCase& c : allOpCases()) covered = covered || c.op == name;
    EXPECT_TRUE(covered) << "no fixture case for op " << name;
  }
}

// A one-op graph for the error tests, with the layer at a known position in a model file.
struct OneOp {
  Graph graph{"errors"};
  Op* op = nullptr;
};

std::unique_ptr<OneOp> makeOneOp(OpKind kind, const std::string& layer,
                                 const std::vector<TensorType>& operandTypes, TensorType result,
                                 Attrs attrs) {
  auto one = std::make_unique<OneOp>();
  std::vector<Value*> operands;
  for (size_t i = 0; i < operandTypes.size(); ++i)
    operands.push_back(one->graph.addInput("in" + std::to_string(i), operandTypes[i]));
  one->op = one->graph.appendOp(kind, operands, layer, std::move(result), std::move(attrs),
                                SourceLoc{"model.yaml", 7, 5});
  return one;
}

// Runs the op and returns the runtime error it must raise.
Error expectRuntimeError(const Op& op, const std::vector<const Tensor*>& operands) {
  try {
    evaluateReferenceOp(op, operands);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_EQ(error.loc(), (SourceLoc{"model.yaml", 7, 5}));
    return error;
  }
  ADD_FAILURE() << "no error raised";
  return Error(ErrorKind::Runtime, {}, "");
}

TEST(ReferenceOpErrors, EmbeddingIndexOutOfRange) {
  Attrs attrs;
  attrs.set("num_embeddings", int64_t{4});
  attrs.set("embedding_dim", int64_t{2});
  auto one = makeOneOp(OpKind::Embedding, "tok",
                       {TensorType::of(DType::I64, {3}), TensorType::of(DType::F32, {4, 2})},
                       TensorType::of(DType::F32, {3, 2}), attrs);
  Tensor indices(DType::I64, {3});
  indices.storeInt(0, 1);
  indices.storeInt(1, 4);
  Tensor weight(DType::F32, {4, 2});
  Error error = expectRuntimeError(*one->op, {&indices, &weight});
  EXPECT_EQ(error.message(), "layer 'tok': embedding index 4 is out of range [0, 4)");
}

TEST(ReferenceOpErrors, EmbeddingNegativeIndex) {
  Attrs attrs;
  attrs.set("num_embeddings", int64_t{4});
  attrs.set("embedding_dim", int64_t{2});
  auto one = makeOneOp(OpKind::Embedding, "tok",
                       {TensorType::of(DType::I32, {2}), TensorType::of(DType::F32, {4, 2})},
                       TensorType::of(DType::F32, {2, 2}), attrs);
  Tensor indices(DType::I32, {2});
  indices.storeInt(1, -1);
  Tensor weight(DType::F32, {4, 2});
  Error error = expectRuntimeError(*one->op, {&indices, &weight});
  EXPECT_EQ(error.message(), "layer 'tok': embedding index -1 is out of range [0, 4)");
}

TEST(ReferenceOpErrors, CrossEntropyTargetOutOfRange) {
  auto one = makeOneOp(OpKind::CrossEntropy, "loss",
                       {TensorType::of(DType::F32, {2, 3}), TensorType::of(DType::I64, {2})},
                       TensorType::of(DType::F32, {}), {});
  Tensor logits(DType::F32, {2, 3});
  Tensor target(DType::I64, {2});
  target.storeInt(0, 2);
  target.storeInt(1, 3);
  Error error = expectRuntimeError(*one->op, {&logits, &target});
  EXPECT_EQ(error.message(),
            "layer 'loss': cross_entropy target 3 of sample 1 is out of range [0, 3)");
}

TEST(ReferenceOpErrors, NllLossTargetOutOfRangeUnlessIgnored) {
  // A negative target other than ignore_index (here 7) is out of range; ignore_index is not.
  auto one = makeOneOp(OpKind::NllLoss, "loss",
                       {TensorType::of(DType::F32, {2, 3}), TensorType::of(DType::I32, {2})},
                       TensorType::of(DType::F32, {2}), {});
  one->op->attrs.set("reduction", std::string("none"));
  one->op->attrs.set("ignore_index", int64_t{7});
  Tensor input(DType::F32, {2, 3});
  Tensor target(DType::I32, {2});
  target.storeInt(0, 7);
  target.storeInt(1, -100);
  Error error = expectRuntimeError(*one->op, {&input, &target});
  EXPECT_EQ(error.message(),
            "layer 'loss': nll_loss target -100 of sample 1 is out of range [0, 3)");
}

TEST(ReferenceOpErrors, ParamIsNotEvaluated) {
  Graph graph("params");
  Op* param = graph.appendOp(OpKind::Param, {}, "W", TensorType::of(DType::F32, {2}));
  EXPECT_THROW(evaluateReferenceOp(*param, {}), InternalError);
}

TEST(ReferenceOpErrors, ShapeDisagreeingWithInferenceIsAGxcBug) {
  auto one = makeOneOp(OpKind::Relu, "r", {TensorType::of(DType::F32, {2, 3})},
                       TensorType::of(DType::F32, {3, 2}), {});
  Tensor x(DType::F32, {2, 3});
  EXPECT_THROW(evaluateReferenceOp(*one->op, {&x}), InternalError);
}

}  // namespace
}  // namespace gxc
