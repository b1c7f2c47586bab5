// Executable (tools/driver/executable.h), what the Python module binds: runs on views of the
// caller's memory give the reference interpreter's answers, a new binding of a symbolic
// dimension compiles once and is kept, and the checks of the inputs are the command line's.
#include "tools/driver/executable.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontend/model_loader.h"
#include "runtime/reference/reference_executor.h"
#include "scratch_dir.h"

namespace gxc {
namespace {

// A linear layer and a relu over a batch of symbolic size, params from the seed.
std::string writeModel(const std::filesystem::path& folder) {
  std::string path = (folder / "linear_relu.yaml").string();
  std::ofstream(path)
      << "gxc: 1\nname: linear_relu\nseed: 3\ndims: {batch: 2}\n"
         "inputs:\n  x: {shape: [batch, 4]}\n"
         "layers:\n"
         "  - {name: fc, op: linear, inputs: [x], in_features: 4, out_features: 3}\n"
         "  - {name: y, op: relu, inputs: [fc]}\noutputs: [y]\n";
  return path;
}

Tensor referenceOutput(const std::string& path, const Tensor& x) {
  ModelOptions options;
  options.dims["batch"] = x.shape()[0];
  std::unique_ptr<Graph> graph = loadModel(path, options);
  return ReferenceExecutor(*graph).run({{"x", x}}).at("y");
}

Tensor input(int64_t rows) {
  Tensor x(DType::F32, {rows, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.storeFloat(i, static_cast<float>(i % 7) - 3.0f);
  return x;
}

void expectNear(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  for (int64_t i = 0; i < expected.numel(); ++i)
    EXPECT_NEAR(actual.loadFloat(i), expected.loadFloat(i), 1e-5) << "element " << i;
}

class ExecutableTest : public ::testing::TestWithParam<std::string> {
 protected:
  CompileOptions options() {
    CompileOptions options;
    options.modelPath = writeModel(folder_);
    if (GetParam() == "cpu")
      options.devices = "cpu";
    else
      options.simGpus = "2", options.placement = GetParam();
    return options;
  }
  std::filesystem::path folder_ = makeScratchDir("gxc-executable-test");
  ~ExecutableTest() override { std::filesystem::remove_all(folder_); }
};

TEST_P(ExecutableTest, RunsEachBindingOfTheBatchAsTheReferenceDoes) {
  Executable executable(options());
  for (int64_t rows : {2, 6, 2}) {
    Tensor x = input(rows);
    std::map<std::string, Tensor> outputs = executable.run({{"x", x.view()}});
    expectNear(outputs.at("y"), referenceOutput(options().modelPath, x));
    EXPECT_EQ(executable.graph().inputs().front()->type.shape, (Shape{rows, 4}));
  }
  EXPECT_EQ(executable.report()["outputs"]["y"]["shape"], nlohmann::json::array({2, 3}));
}

TEST_P(ExecutableTest, RefusesInputsTheModelDoesNotTake) {
  Executable executable(options());
  Tensor wide(DType::F32, {2, 5}), doubles(DType::F64, {2, 4});
  EXPECT_THROW(executable.run({{"z", wide.view()}}), Error);
  try {
    executable.run({{"x", doubles.view()}});
    FAIL() << "an f64 input ran";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Model);
    EXPECT_NE(error.message().find("input 'x' is f64[2,4] but the model declares f32[2,4]"),
              std::string::npos)
        << error.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Placements, ExecutableTest,
                         ::testing::Values("cpu", "auto", "data-parallel", "pipeline"));

}  // namespace
}  // namespace gxc
