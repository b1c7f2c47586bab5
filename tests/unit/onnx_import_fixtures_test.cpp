// `gxc import` on the ONNX models of tests/fixtures/onnx/import (make_onnx_import_fixtures.py):
// the written model keeps the dynamic axes symbolic and computes NumPy's numbers at sizes the
// import never saw; outputs and initializers keep their ONNX names; shape arithmetic with a
// floor division (Mod, Xor) is folded.
#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "frontend/onnx_import.h"
#include "runtime/reference/reference_executor.h"
#include "tensor/npy.h"

namespace gxc {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GXC_FIXTURE_DIR) + "/onnx/import/" + name;
}

std::string errorOf(const std::string& model) {
  try {
    importOnnx(fixture(model), {}, /*forImport=*/true);
  } catch (const Error& error) {
    return formatError(error);
  }
  return "imported";
}

// The imported model file, its weights in memory, lowered at `dims`.
std::unique_ptr<Graph> lowerImport(const ImportedOnnx& imported,
                                   std::map<std::string, int64_t> dims) {
  ModelOptions options;
  options.dims = std::move(dims);
  options.inMemoryWeights = imported.weights;
  return loadModelFromString(onnxImportYaml(imported, ""), "model.yaml",
                             std::string(GXC_FIXTURE_DIR), options);
}

void expectNear(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  for (int64_t i = 0; i < expected.numel(); ++i)
    ASSERT_NEAR(actual.loadDouble(i), expected.loadDouble(i),
                1e-5 * std::max(1.0, std::abs(expected.loadDouble(i))))
        << what << " at " << i;
}

// Flatten, Reshape's 0, Unsqueeze/Squeeze, shape arithmetic, ConstantOfShape, Expand and a
// Slice to the end, of x [b, s, 4]: the import evaluates them with sizes of its own, and the
// model it writes must not hold those sizes.
TEST(OnnxImportFixturesTest, SizesOfDynamicAxesStaySymbolic) {
  ImportedOnnx imported = importOnnx(fixture("dynamic_axes.onnx"), {}, /*forImport=*/true);
  std::string yaml = onnxImportYaml(imported, "");
  for (const char* line : {"{name: flat, op: reshape, inputs: [double], shape: [b, s*4]}",
                           "{name: reshaped, op: reshape, inputs: [x], shape: [b, -1]}",
                           "{name: expanded, op: expand, inputs: [row], shape: [b, s, -1]}"})
    EXPECT_NE(yaml.find(line), std::string::npos) << line << " in\n" << yaml;
  for (auto [b, s] : {std::pair<int64_t, int64_t>{3, 2}, {5, 3}}) {
    std::string folder = fixture("dynamic_axes_" + std::to_string(b) + "x" + std::to_string(s));
    std::unique_ptr<Graph> graph = lowerImport(imported, {{"b", b}, {"s", s}});
    auto outputs = ReferenceExecutor(*graph).run({{"x", readNpy(folder + "/x.npy")}});
    for (const char* name :
         {"flat", "reshaped", "squeezed", "viewed", "plus_one", "expanded", "tail"})
      expectNear(outputs.at(name), readNpy(folder + "/" + name + ".npy"),
                 fmt::format("{} at b={} s={}", name, b, s));
  }
}

TEST(OnnxImportFixturesTest, ANumberOfTheAxesTheFormatCannotWriteIsRefusedAtItsNode) {
  EXPECT_EQ(errorOf("slice_to_size.onnx"),
            fixture("slice_to_size.onnx") +
                ": node 3 \"drop_last\": error: Slice node: its slice layer's `end` depends on "
                "the sizes of the dynamic axes (b, s), and a model file can only hold one "
                "binding's number there: import with --dim for every dynamic axis");
}

TEST(OnnxImportFixturesTest, EveryOutputOfAMultiOutputNodeKeepsItsName) {
  ImportedOnnx imported = importOnnx(fixture("softmax_cross_entropy.onnx"), {});
  std::vector<std::string> names;
  for (const GraphOutput& output : imported.graph->outputs()) names.push_back(output.name);
  EXPECT_EQ(names, (std::vector<std::string>{"z", "log_prob"}));
  EXPECT_TRUE(imported.renamedOutputs.empty());
  std::string folder = fixture("softmax_cross_entropy");
  auto outputs = ReferenceExecutor(*imported.graph)
                     .run({{"scores", readNpy(folder + "/scores.npy")},
                           {"labels", readNpy(folder + "/labels.npy")}});
  expectNear(outputs.at("z"), readNpy(folder + "/z.npy"), "z");
  expectNear(outputs.at("log_prob"), readNpy(folder + "/log_prob.npy"), "log_prob");
}

// nn.Sequential's state_dict names (0.weight) are kept, quoted where YAML would read a number
// (`1`); a name the format cannot hold (scale:0) changes, and the change is reported.
TEST(OnnxImportFixturesTest, InitializerNamesAreKeptOrTheirChangeReported) {
  ImportedOnnx imported = importOnnx(fixture("sequential.onnx"), {}, /*forImport=*/true);
  std::string yaml = onnxImportYaml(imported, "model.safetensors");
  for (const char* text : {"  0.weight: {shape: [4, 3], dtype: f32}", "  2.bias: {shape: [2]",
                           "  \"1\": {shape: [2], dtype: f32}", "inputs: [Mul, \"1\"]",
                           "  scale_0: {shape: [2], dtype: f32}"})
    EXPECT_NE(yaml.find(text), std::string::npos) << text << " in\n" << yaml;
  EXPECT_EQ(imported.renamedParams,
            (std::vector<std::pair<std::string, std::string>>{{"scale:0", "scale_0"}}));
  EXPECT_TRUE(imported.weights->contains("0.weight"));
  std::unique_ptr<Graph> graph = lowerImport(imported, {});
  std::string folder = fixture("sequential");
  auto outputs = ReferenceExecutor(*graph).run({{"x", readNpy(folder + "/x.npy")}});
  expectNear(outputs.at("y"), readNpy(folder + "/y.npy"), "y");
}

TEST(OnnxImportFixturesTest, AFloorDivisionOfSizesIsFolded) {
  std::string folder = fixture("floor_divide");
  ModelOptions options;
  options.givenInputs["x"] = {folder + "/x.npy", [] { return Shape{3, 5, 8}; }, false, {}};
  ImportedOnnx imported = importOnnx(fixture("floor_divide.onnx"), options);
  auto outputs = ReferenceExecutor(*imported.graph).run({{"x", readNpy(folder + "/x.npy")}});
  expectNear(outputs.at("y"), readNpy(folder + "/y.npy"), "y");
  std::string yaml =
      onnxImportYaml(importOnnx(fixture("floor_divide.onnx"), {}, /*forImport=*/true), "");
  EXPECT_NE(yaml.find("shape: [batch, seq, 2, 4]"), std::string::npos) << yaml;
}

}  // namespace
}  // namespace gxc
