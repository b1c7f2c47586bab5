// cuDNN's convolutions on the cuda platform (runtime/cuda/cuda_cudnn_conv.h) on a real GPU:
// every conv2d and conv_transpose2d case of tests/fixtures/ops.json that cuDNN takes (groups,
// dilation, stride, padding, output_padding, no bias, f16, bf16) run through CudnnConvRunner
// against the fixture's expected values, plans made once per kind of convolution, and the
// executor's dispatch: the cases cuDNN takes run by it, the others by the generated kernel.
// Skipped, visibly, where there is no GPU or this gxc was built without cuDNN.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cuda_test_helpers.h"
#include "cuda_tolerances.h"
#include "output_compare.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_cudnn_conv.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/cuda/gpu_devices.h"
#include "tests/unit/op_fixture_graph.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

#define GXC_REQUIRE_CUDNN()                                                           \
  do {                                                                                \
    if (!::gxc::builtWithCudnn())                                                     \
      GTEST_SKIP() << "needs cuDNN: this gxc was built without it (its convolutions " \
                      "on GPUs are the generated kernels)";                           \
  } while (0)

bool isConvolution(const fixtures::OpCase& c) {
  return c.op == "conv2d" || c.op == "conv_transpose2d";
}

std::vector<fixtures::OpCase> convolutionCases() {
  std::vector<fixtures::OpCase> cases;
  for (const fixtures::OpCase& c : fixtures::allOpCases())
    if (isConvolution(c)) cases.push_back(c);
  return cases;
}

const fixtures::OpFixtureGraph& hostGraph() {
  static const fixtures::OpFixtureGraph graph = fixtures::buildOpFixtureGraph({Device::cpu()});
  return graph;
}

// The dot product's length behind each output: in_channels / groups * kh * kw.
int64_t dotLength(const CudnnConvGeometry& c) { return c.w[1] * c.w[2] * c.w[3]; }

// Device memory from the runner's allocator, freed with the test.
struct DeviceBlocks {
  CachingAllocator& allocator;
  std::vector<CachingAllocator::Block> blocks;
  ~DeviceBlocks() {
    for (const auto& block : blocks) allocator.free(block);
  }
  void* upload(const Tensor& tensor) {
    blocks.push_back(allocator.allocate(std::max<int64_t>(tensor.nbytes(), 1), "test"));
    checkCuda(
        cudaMemcpy(blocks.back().address, tensor.data(), tensor.nbytes(), cudaMemcpyHostToDevice),
        "test upload");
    return blocks.back().address;
  }
};

class CudnnConvFixtureTest : public testing::TestWithParam<fixtures::OpCase> {};

TEST_P(CudnnConvFixtureTest, MatchesTheExpectedValues) {
  GXC_REQUIRE_GPUS(1);
  GXC_REQUIRE_CUDNN();
  const fixtures::OpCase& c = GetParam();
  const Op& op = *hostGraph().opOf.at(c.name);
  CudnnConv conv{op.layerName(), cudnnConvGeometry(op)};
  if (!conv.geometry.viaCudnn())
    GTEST_SKIP() << "the generated kernel runs it (CudaPlatformFixtureTest checks it): "
                 << *conv.geometry.generatedBecause;
  auto allocator = makeCudaCachingAllocator("cuda:0", 0, usableGpuMemory(0));
  {
    DeviceBlocks device{*allocator, {}};
    std::vector<void*> operands;
    for (const auto& input : c.inputs) operands.push_back(device.upload(fixtures::toTensor(input)));
    Tensor expected = fixtures::toTensor(c.expected);
    // Garbage in the result first: the bias fill and beta = 1 must not read what was there.
    Tensor garbage(expected.dtype(), expected.shape());
    for (int64_t i = 0; i < garbage.numel(); ++i) garbage.storeFloat(i, 1e3f);
    void* out = device.upload(garbage);
    CudnnConvRunner runner(0, *allocator, /*allowTf32=*/false);
    ASSERT_TRUE(runner.run(conv, operands[0], operands[1],
                           conv.geometry.bias ? operands[2] : nullptr, out, nullptr))
        << "cuDNN has no engine for " << c.name;
    Tensor got(expected.dtype(), expected.shape());
    checkCuda(cudaMemcpy(got.data(), out, got.nbytes(), cudaMemcpyDeviceToHost), "download");
    expectOutputsCloseNormwise(
        {{c.name, got}}, {{c.name, expected}},
        gputol::cudnnConvTolerance(expected.dtype(), dotLength(conv.geometry)));
    // Again: the plan is reused, not made anew.
    ASSERT_TRUE(runner.run(conv, operands[0], operands[1],
                           conv.geometry.bias ? operands[2] : nullptr, out, nullptr));
    checkCuda(cudaDeviceSynchronize(), c.name);
    EXPECT_EQ(runner.stats().plans, 1);
    EXPECT_EQ(runner.stats().calls, 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudnnConvFixtureTest, testing::ValuesIn(convolutionCases()),
                         [](const testing::TestParamInfo<fixtures::OpCase>& info) {
                           return info.param.name;
                         });

// The executor sends each convolution cuDNN takes to cuDNN, the others to their generated
// kernels, saying so in a note; every result within the bound of how it was computed.
TEST(CudnnConvExecutor, DispatchesTheConvolutionsCudnnTakesToIt) {
  GXC_REQUIRE_GPUS(1);
  GXC_REQUIRE_CUDNN();
  fixtures::OpFixtureGraph gpu = fixtures::buildOpFixtureGraph({Device::cuda(0)});
  int64_t viaCudnn = 0;
  std::vector<std::string> expectedNotes;
  for (const fixtures::OpCase& c : convolutionCases()) {
    CudnnConvGeometry geometry = cudnnConvGeometry(*hostGraph().opOf.at(c.name));
    if (geometry.viaCudnn())
      ++viaCudnn;
    else
      expectedNotes.push_back(c.name);
  }
  ASSERT_GT(viaCudnn, 0);
  CudaConfig config;
  config.deviceMap = {0};
  std::vector<std::string> notes;
  config.note = [&](const std::string& line) { notes.push_back(line); };
  CudaExecutor executor(*gpu.graph, config);
  std::map<std::string, Tensor> outputs = executor.run(gpu.inputs);
  ASSERT_NE(executor.cudnnConvStats(0), nullptr);
  EXPECT_EQ(executor.cudnnConvStats(0)->calls + executor.cudnnConvStats(0)->noEngine, viaCudnn);
  EXPECT_EQ(executor.cudnnConvStats(0)->noEngine, 0);
  for (const std::string& name : expectedNotes)
    EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                            [&](const std::string& note) {
                              return note.find("'" + name + "'") != std::string::npos &&
                                     note.find("generated kernel") != std::string::npos;
                            }))
        << "no note for " << name;
  for (const fixtures::OpCase& c : convolutionCases()) {
    CudnnConvGeometry geometry = cudnnConvGeometry(*hostGraph().opOf.at(c.name));
    Tensor expected = fixtures::toTensor(c.expected);
    expectOutputsCloseNormwise({{c.name, outputs.at(c.name)}}, {{c.name, expected}},
                               gputol::cudnnConvTolerance(expected.dtype(), dotLength(geometry)));
  }
}

}  // namespace
}  // namespace gxc
