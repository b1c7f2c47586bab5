// The textual IR: attribute values, strings and locations survive print -> parse -> print.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace gxc {
namespace {

TEST(IrTextTest, RoundTripsEveryAttributeKindAndEscapes) {
  Graph graph("g");
  graph.attrs().set("seed", int64_t{7});
  Value* x = graph.addInput("x", TensorType::of(DType::BF16, {2, 3}, Device::cpu()),
                            {"dir/\"odd\" name.yaml", 3, 4});
  Attrs init;
  init.set("name", std::string("w.weight"));
  init.set("init", std::string("constant"));
  init.set("value", -0.1);
  init.set("seed", int64_t{7});
  graph.appendOp(OpKind::Param, {}, "w.weight", TensorType::of(DType::BF16, {3}), init);
  Attrs sumAttrs;
  sumAttrs.set("axis", std::vector<int64_t>{0, -1});
  sumAttrs.set("keepdim", true);
  Op* sum =
      graph.appendOp(OpKind::Sum, {x}, "s", TensorType{false, DType::F32, {}, Device::cuda(2)},
                     sumAttrs, {"m.yaml", 10, 2});
  Attrs scale;
  scale.set("scalar", 1e-300);
  graph.appendOp(OpKind::Mul, {sum->result}, "m-1", TensorType{}, scale);
  graph.addOutput("m-1", graph.find("m-1"));
  std::string text = printGraph(graph);
  EXPECT_NE(text.find("loc(\"dir/\\\"odd\\\" name.yaml\":3:4)"), std::string::npos) << text;
  EXPECT_NE(text.find("{axis = [0, -1], keepdim = true}"), std::string::npos) << text;
  EXPECT_NE(text.find("scalar = 1e-300"), std::string::npos) << text;
  EXPECT_NE(text.find("value = -0.1"), std::string::npos) << text;
  auto parsed = parseGraph(text, "t.gxir");
  EXPECT_EQ(printGraph(*parsed), text);
  EXPECT_TRUE(verifyGraph(*parsed).empty());
}

TEST(IrTextTest, FloatsKeepAPointSoTheyReadBackAsFloats) {
  EXPECT_EQ(floatString(2.0), "2.0");
  EXPECT_EQ(floatString(0.1), "0.1");
  EXPECT_EQ(floatString(-1e20), "-1e+20");
}

TEST(VerifierTest, ReportsTypesThatDisagreeWithTheirRule) {
  auto graph = parseGraph(R"(graph @g(%x: f32[2,3] @cpu) -> (r) {
  %r = relu %x : f32[3,2] @cpu
  return %r
})",
                          "g.gxir");
  std::vector<std::string> problems = verifyGraph(*graph);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "op %r: type is f32[3,2] @cpu but its rule gives f32[2,3] @cpu");
}

TEST(VerifierTest, ReportsAGraphWithoutOutputs) {
  auto graph = parseGraph("graph @g(%x: f32[2] @cpu) -> () {\n  return\n}\n", "g.gxir");
  EXPECT_EQ(verifyGraph(*graph), std::vector<std::string>{"the graph has no outputs"});
}

}  // namespace
}  // namespace gxc
