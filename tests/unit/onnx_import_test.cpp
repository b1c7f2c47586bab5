// The ONNX importer on models built here with ONNX's own protobuf classes: locations name the
// node, the import's YAML lowers to the graph the .onnx lowers to, shape arithmetic becomes
// attributes, GELUs written out as arithmetic become one `gelu` (and nothing else does), and
// malformed or unsupported graphs are refused in one message.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "frontend/model_loader.h"
#include "frontend/onnx_import.h"
#include "ir/printer.h"
#include "runtime/reference/reference_executor.h"
#include "tensor/npy.h"

namespace gxc {
namespace {

namespace fs = std::filesystem;

class OnnxImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("gxc-onnx-import-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
    model_.mutable_graph()->set_name("net");
  }
  void TearDown() override { fs::remove_all(dir_); }

  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  void input(const std::string& name, std::vector<int64_t> dims, const std::string& dynamic = "",
             int32_t type = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto* value = graph().add_input();
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    if (!dynamic.empty()) tensor->mutable_shape()->add_dim()->set_dim_param(dynamic);
    for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void output(const std::string& name) { graph().add_output()->set_name(name); }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "") {
    onnx::NodeProto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& i : inputs) n->add_input(i);
    for (const std::string& o : outputs) n->add_output(o);
    return *n;
  }
  void initializer(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    onnx::TensorProto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  void scalar(const std::string& name, float value) { initializer(name, {}, {value}); }
  void ints(const std::string& name, std::vector<int64_t> values) {
    onnx::TensorProto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  std::string save() {
    std::string path = (dir_ / "model.onnx").string();
    std::ofstream out(path, std::ios::binary);
    model_.SerializeToOstream(&out);
    return path;
  }
  std::string errorOf(const ModelOptions& options = {}) {
    try {
      importOnnx(save(), options);
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::Model);
      return formatError(error);
    }
    ADD_FAILURE() << "the model was imported";
    return "";
  }

  fs::path dir_;
  onnx::ModelProto model_;
};

// The IR without locations and weight file names, its lines sorted: params are declared where
// the model file lists them, or where an ONNX node first reads them.
std::string comparable(const std::string& ir) {
  std::string text = std::regex_replace(ir, std::regex(R"( loc\([^)]*\))"), "");
  text = std::regex_replace(text, std::regex(R"(file = \"[^"]*\", )"), "");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST_F(OnnxImportTest, LocsNameTheNodeAndTheImportLowersToTheSameGraph) {
  input("x", {3, 4});
  initializer("fc.weight", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  initializer("fc.bias", {2}, {0.5f, -0.5f});
  onnx::NodeProto& gemm = node("Gemm", {"x", "fc.weight", "fc.bias"}, {"h"}, "/fc/Gemm");
  onnx::AttributeProto* transB = gemm.add_attribute();
  transB->set_name("transB");
  transB->set_type(onnx::AttributeProto::INT);
  transB->set_i(1);
  node("Relu", {"h"}, {"y:0"}, "/act/Relu");
  output("y:0");
  ImportedOnnx imported = importOnnx(save(), {});
  std::string ir = printGraph(*imported.graph);
  EXPECT_NE(ir.find(R"(loc(")" + (dir_ / "model.onnx").string() + R"(":node 0 "/fc/Gemm"))"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find(R"(":node 1 "/act/Relu"))"), std::string::npos) << ir;
  ASSERT_EQ(imported.renamedOutputs.size(), 1u);
  EXPECT_EQ(imported.renamedOutputs[0].second, "y_0");

  // The written model, with its weights beside it, lowers to the same ops and attributes.
  std::map<std::string, Tensor> weights;
  for (const auto& [name, entry] : imported.weights->entries())
    weights[name] = imported.weights->read(name);
  writeSafetensors((dir_ / "model.safetensors").string(), weights);
  std::string yaml = onnxImportYaml(imported, "model.safetensors");
  EXPECT_NE(yaml.find("fc.weight: {shape: [2, 4], dtype: f32}"), std::string::npos) << yaml;
  auto reloaded = loadModelFromString(yaml, "model.yaml", dir_.string());
  EXPECT_EQ(comparable(printGraph(*reloaded)), comparable(ir)) << "imported:\n" << yaml;
}

TEST_F(OnnxImportTest, ShapeArithmeticBecomesAttributes) {
  input("x", {4}, "batch");
  ints("zero", {0});
  ints("tail", {2, 2});
  node("Shape", {"x"}, {"s"});
  node("Gather", {"s", "zero"}, {"b"});
  node("Concat", {"b", "tail"}, {"shape"}).add_attribute()->set_name("axis");
  graph().mutable_node(2)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  graph().mutable_node(2)->mutable_attribute(0)->set_i(0);
  node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  output("y");
  ModelOptions options;
  options.dims["batch"] = 3;
  ImportedOnnx imported = importOnnx(save(), options);
  const Op* reshape = imported.graph->find("y")->producer;
  EXPECT_EQ(reshape->kind, OpKind::Reshape);
  EXPECT_EQ(reshape->attrs.getIntList("shape").value_or(std::vector<int64_t>{}),
            (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(imported.weights->entries().size(), 0u) << "shape constants are not params";
  // A model file whose batch stays dynamic holds the axis's name where the binding's number
  // was (with --dim batch=3 the import fixes the axis, and the number).
  std::string fixed = onnxImportYaml(importOnnx(save(), options, /*forImport=*/true), "");
  EXPECT_NE(fixed.find("shape: [3, 2, 2]"), std::string::npos) << fixed;
  std::string dynamic = onnxImportYaml(importOnnx(save(), {}, /*forImport=*/true), "");
  EXPECT_NE(dynamic.find("shape: [batch, 2, 2]"), std::string::npos) << dynamic;
}

TEST_F(OnnxImportTest, UnsupportedOpsAreAllListedInOneError) {
  input("x", {2});
  node("Relu", {"x"}, {"a"}, "ok");
  node("Hardmax", {"a"}, {"b"}, "first");
  node("LpPool", {"b"}, {"c"}, "second");
  output("c");
  std::string message = errorOf();
  EXPECT_NE(message.find("2 nodes use ONNX ops gxc does not have"), std::string::npos) << message;
  EXPECT_NE(message.find(R"(Hardmax (node 1 "first", opset 17))"), std::string::npos) << message;
  EXPECT_NE(message.find(R"(LpPool (node 2 "second", opset 17))"), std::string::npos) << message;
}

TEST_F(OnnxImportTest, ACycleAndAnUnproducedNameAreRefusedAtTheirNode) {
  input("x", {2});
  node("Add", {"x", "b"}, {"a"}, "first");
  node("Relu", {"a"}, {"b"}, "second");
  output("b");
  EXPECT_NE(errorOf().find("is on a cycle"), std::string::npos);
  graph().clear_node();
  node("Relu", {"nowhere"}, {"b"}, "lost");
  std::string message = errorOf();
  EXPECT_NE(message.find(R"(node 0 "lost": error: Relu node reads 'nowhere', which no node)"),
            std::string::npos)
      << message;
}

TEST_F(OnnxImportTest, AnAttributeGxcWouldIgnoreIsRefused) {
  input("x", {2, 3});
  onnx::AttributeProto* axis = node("ArgMax", {"x"}, {"y"}, "arg").add_attribute();
  axis->set_name("select_last_index");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  output("y");
  std::string message = errorOf();
  EXPECT_NE(message.find(R"(node 0 "arg": error: ArgMax node: select_last_index = 1 is not)"),
            std::string::npos)
      << message;
}

// A graph input that is a setting (Unsqueeze's axes) takes its values from the run's file.
TEST_F(OnnxImportTest, ASettingGivenAsAGraphInputIsBoundByItsFile) {
  input("x", {3});
  input("axes", {1}, "", onnx::TensorProto::INT64);
  node("Unsqueeze", {"x", "axes"}, {"y"}, "unsqueeze");
  output("y");
  EXPECT_NE(errorOf().find("a graph input given by --input"), std::string::npos);
  Tensor axes(DType::I64, {1});
  axes.storeInt(0, 0);
  std::string file = (dir_ / "axes.npy").string();
  writeNpy(file, axes);
  ModelOptions options;
  options.givenInputs["axes"] = {file, [] { return Shape{1}; }, false, {}};
  ImportedOnnx imported = importOnnx(save(), options);
  EXPECT_EQ(imported.graph->find("y")->type.shape, (Shape{1, 3}));
}

// The kinds of the imported graph's ops, in order.
std::vector<OpKind> opKinds(const Graph& graph) {
  std::vector<OpKind> kinds;
  for (const Op* op : graph.ops())
    if (op->kind != OpKind::Param) kinds.push_back(op->kind);
  return kinds;
}

// y for x from -4 to 4 through the reference interpreter, against `gelu` in double.
void expectComputes(const Graph& graph, double (*gelu)(double)) {
  Tensor x(DType::F32, {2, 9});
  for (int64_t i = 0; i < x.numel(); ++i) x.storeFloat(i, -4.0f + 0.5f * static_cast<float>(i));
  Tensor y = ReferenceExecutor(graph).run({{"x", x}}).at("y");
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_NEAR(y.loadDouble(i), gelu(x.loadDouble(i)), 1e-6) << x.loadDouble(i);
}

double exactGelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double tanhGelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// PyTorch's export of nn.GELU() below opset 20: one gelu layer, named and located as the last
// node, in the written model too.
TEST_F(OnnxImportTest, AnExactGeluWrittenOutIsOneGelu) {
  input("x", {2, 9});
  scalar("sqrt2", 1.4142135381698608f);
  scalar("one", 1.0f);
  scalar("half", 0.5f);
  node("Div", {"x", "sqrt2"}, {"d"}, "/act/Div");
  node("Erf", {"d"}, {"e"}, "/act/Erf");
  node("Add", {"e", "one"}, {"a"}, "/act/Add");
  node("Mul", {"x", "a"}, {"m"}, "/act/Mul");
  node("Mul", {"m", "half"}, {"y"}, "/act/Mul_1");
  output("y");
  ImportedOnnx imported = importOnnx(save(), {});
  ASSERT_EQ(opKinds(*imported.graph), std::vector<OpKind>{OpKind::Gelu});
  const Op& gelu = *imported.graph->find("y")->producer;
  EXPECT_EQ(gelu.attrs.getString("approximate", "none"), "none");
  EXPECT_EQ(gelu.operands[0]->name, "x");
  EXPECT_NE(printGraph(*imported.graph).find(R"(":node 4 "/act/Mul_1"))"), std::string::npos);
  expectComputes(*imported.graph, exactGelu);
  std::string yaml = onnxImportYaml(imported, "model.safetensors");
  EXPECT_NE(yaml.find("op: gelu"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("erf"), std::string::npos) << yaml;
}

// Other spellings: the tanh form with x^3 as Pow and 0.5 * x first; the exact form as a Mul by
// 1/sqrt(2), its 0.5 on the other side, and x itself computed by an Add of a scalar (a cone op,
// so the cone first grows past it: gelu(x + 0.25) is no GELU of x, and x is the value read
// twice).
TEST_F(OnnxImportTest, OtherSpellingsOfBothFormsAreOneGelu) {
  input("x", {2, 9});
  scalar("three", 3.0f);
  scalar("c", 0.044715f);
  scalar("s", 0.7978845834732056f);
  scalar("one", 1.0f);
  scalar("half", 0.5f);
  node("Pow", {"x", "three"}, {"p"});
  node("Mul", {"c", "p"}, {"cp"});
  node("Add", {"x", "cp"}, {"in"});
  node("Mul", {"in", "s"}, {"si"});
  node("Tanh", {"si"}, {"t"});
  node("Add", {"one", "t"}, {"a"});
  node("Mul", {"half", "x"}, {"hx"});
  node("Mul", {"hx", "a"}, {"y"});
  output("y");
  ImportedOnnx imported = importOnnx(save(), {});
  ASSERT_EQ(opKinds(*imported.graph), std::vector<OpKind>{OpKind::Gelu});
  EXPECT_EQ(imported.graph->find("y")->producer->attrs.getString("approximate", ""), "tanh");
  expectComputes(*imported.graph, tanhGelu);

  graph().clear_node();
  scalar("inv", 0.7071067690849304f);
  scalar("quarter", 0.25f);
  node("Add", {"x", "quarter"}, {"x1"});
  node("Mul", {"x1", "inv"}, {"d"});
  node("Erf", {"d"}, {"e"});
  node("Add", {"e", "one"}, {"a"});
  node("Mul", {"a", "half"}, {"h"});
  node("Mul", {"x1", "h"}, {"y"});
  imported = importOnnx(save(), {});
  ASSERT_EQ(opKinds(*imported.graph), (std::vector<OpKind>{OpKind::Add, OpKind::Gelu}));
  EXPECT_EQ(imported.graph->find("y")->producer->operands[0]->name, "x1");
  expectComputes(*imported.graph, [](double x) { return exactGelu(x + 0.25); });
}

// ONNX's Pow is C's pow; gxc's pow with a number 0.5 or -0.5 is torch's sqrt or rsqrt, NaN at
// -inf. So a Pow by a constant 0.5 keeps its exponent a tensor (C's pow, +inf at -inf, as
// ops.json's pow_nonfinite holds), and one by 2 becomes `scalar` as any other constant does.
TEST_F(OnnxImportTest, PowByAHalfKeepsCsPow) {
  input("x", {2, 9});
  scalar("half", 0.5f);
  scalar("two", 2.0f);
  node("Pow", {"x", "half"}, {"y"});
  node("Pow", {"x", "two"}, {"z"});
  output("y");
  output("z");
  ImportedOnnx imported = importOnnx(save(), {});
  EXPECT_EQ(imported.graph->find("y")->producer->operands.size(), 2u);
  EXPECT_EQ(imported.graph->find("z")->producer->attrs.getFloat("scalar", 0.0), 2.0);
}

// What is not a GELU keeps its nodes: a member read outside the cone, a wrong constant, a
// second tensor where x should be.
TEST_F(OnnxImportTest, NearGelusKeepTheirNodes) {
  input("x", {2, 9});
  input("z", {2, 9});
  scalar("sqrt2", 1.4142135381698608f);
  scalar("one", 1.0f);
  scalar("half", 0.5f);
  scalar("wrong", 1.5f);
  auto exactGeluNodes = [&](const std::string& divisor, const std::string& outer) {
    graph().clear_node();
    graph().clear_output();
    node("Div", {"x", divisor}, {"d"});
    node("Erf", {"d"}, {"e"});
    node("Add", {"e", "one"}, {"a"});
    node("Mul", {outer, "a"}, {"m"});
    node("Mul", {"m", "half"}, {"y"});
    output("y");
  };
  const std::vector<OpKind> kept = {OpKind::Div, OpKind::Erf, OpKind::Add, OpKind::Mul,
                                    OpKind::Mul};
  exactGeluNodes("sqrt2", "x");
  output("e");
  EXPECT_EQ(opKinds(*importOnnx(save(), {}).graph), kept) << "erf is a graph output";
  exactGeluNodes("wrong", "x");
  EXPECT_EQ(opKinds(*importOnnx(save(), {}).graph), kept) << "x / 1.5";
  exactGeluNodes("sqrt2", "z");
  EXPECT_EQ(opKinds(*importOnnx(save(), {}).graph), kept) << "z * phi(x)";
}

}  // namespace
}  // namespace gxc
