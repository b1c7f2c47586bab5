// cuBLASLt GEMMs (runtime/cuda/cuda_gemm.h) against the reference interpreter: f32, f16 and bf16,
// the bias / relu / gelu epilogues, transposes and broadcast batches.
#include <gtest/gtest.h>

#include <ostream>
#include <random>
#include <sstream>

#include "cuda_test_helpers.h"
#include "cuda_tolerances.h"
#include "ir/parser.h"
#include "output_compare.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/reference/reference_ops.h"

namespace gxc {
namespace {

Tensor randomTensor(DType dtype, const Shape& shape, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  Tensor tensor(dtype, shape);
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.storeFloat(i, normal(generator));
  return tensor;
}

// Device copies of host tensors, freed with the test.
class DeviceTensors {
 public:
  ~DeviceTensors() {
    for (void* pointer : pointers_) cudaFree(pointer);
  }
  void* upload(const Tensor& tensor) {
    void* device = nullptr;
    checkCuda(cudaMalloc(&device, std::max<size_t>(tensor.nbytes(), 1)), "test upload");
    checkCuda(cudaMemcpy(device, tensor.data(), tensor.nbytes(), cudaMemcpyHostToDevice),
              "test upload");
    pointers_.push_back(device);
    return device;
  }
  Tensor download(const void* device, DType dtype, const Shape& shape) {
    Tensor tensor(dtype, shape);
    checkCuda(cudaMemcpy(tensor.data(), device, tensor.nbytes(), cudaMemcpyDeviceToHost),
              "test download");
    return tensor;
  }

 private:
  std::vector<void*> pointers_;
};

struct EpilogueCase {
  DType dtype;
  bool bias;
  const char* activation;  // "", "relu" or "gelu"
};

// Also the test's name: f32_bias_relu.
std::ostream& operator<<(std::ostream& out, const EpilogueCase& c) {
  out << dtypeName(c.dtype) << (c.bias ? "_bias" : "_nobias");
  if (*c.activation) out << "_" << c.activation;
  return out;
}

std::vector<EpilogueCase> allEpilogueCases() {
  std::vector<EpilogueCase> cases;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (bool bias : {false, true})
      for (const char* activation : {"", "relu", "gelu"})
        cases.push_back({dtype, bias, activation});
  return cases;
}

class CudaGemmEpilogueTest : public ::testing::TestWithParam<EpilogueCase> {};

TEST_P(CudaGemmEpilogueTest, LinearWithEpilogueMatchesTheReference) {
  GXC_REQUIRE_GPUS(1);
  const EpilogueCase& epilogue = GetParam();
  DType dtype = epilogue.dtype;
  std::string dt(dtypeName(dtype));
  // linear then the activation, as the reference computes them unfused.
  std::string activation =
      std::string(epilogue.activation) == "relu" ? "  %y = relu %l : " + dt + "[96,80] @cpu\n"
      : std::string(epilogue.activation) == "gelu"
          ? "  %y = gelu %l {approximate = \"tanh\"} : " + dt + "[96,80] @cpu\n"
          : "";
  std::string text = "graph @g(%x: " + dt + "[96,64] @cpu, %w: " + dt + "[80,64] @cpu, %b: " + dt +
                     "[80] @cpu) -> (y) {\n  %l = linear %x, %w" + (epilogue.bias ? ", %b" : "") +
                     " {in_features = 64, out_features = 80} : " + dt + "[96,80] @cpu\n" +
                     activation + "  return %" + (activation.empty() ? "l" : "y") + "\n}\n";
  auto graph = parseGraph(text, "gemm.gxir");
  const Op& linear = *graph->ops().front();
  Tensor x = randomTensor(dtype, {96, 64}, 1), w = randomTensor(dtype, {80, 64}, 2),
         b = randomTensor(dtype, {80}, 3);
  std::vector<const Tensor*> operands = {&x, &w};
  if (epilogue.bias) operands.push_back(&b);
  Tensor expected = evaluateReferenceOp(linear, operands);
  if (!activation.empty()) expected = evaluateReferenceOp(*graph->ops().back(), {&expected});

  std::optional<CudaGemm> gemm = describeGemm(linear);
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->bias, epilogue.bias);
  std::string name = epilogue.activation;
  gemm->activation = name == "relu"   ? GemmActivation::Relu
                     : name == "gelu" ? GemmActivation::Gelu
                                      : GemmActivation::None;
  DeviceTensors device;
  void* out = device.upload(Tensor(dtype, {96, 80}));
  CudaGemmRunner runner(0, /*allowTf32=*/false);
  runner.run(*gemm, device.upload(x), device.upload(w), device.upload(b), out, nullptr);
  checkCuda(cudaDeviceSynchronize(), "gemm");
  // The activation changes the GEMM's error by at most 1.13x (gelu's steepest slope).
  expectOutputsCloseNormwise({{"y", device.download(out, dtype, {96, 80})}}, {{"y", expected}},
                             1.2 * gputol::gemmTolerance(dtype, 64));
}

INSTANTIATE_TEST_SUITE_P(DtypesAndEpilogues, CudaGemmEpilogueTest,
                         ::testing::ValuesIn(allEpilogueCases()),
                         [](const ::testing::TestParamInfo<EpilogueCase>& info) {
                           std::ostringstream name;
                           name << info.param;
                           return name.str();
                         });

// Batched matmuls: a shared right operand (stride 0), equal batches (one strided call), and
// batches that broadcast both ways (one call per matrix); with transposes.
TEST(CudaGemmTest, BatchedAndTransposedMatmulsMatchTheReference) {
  GXC_REQUIRE_GPUS(1);
  struct Case {
    Shape a, b, out;
    bool ta, tb;
  };
  for (const Case& c : {Case{{2, 3, 16, 24}, {24, 8}, {2, 3, 16, 8}, false, false},
                        Case{{4, 16, 24}, {4, 24, 8}, {4, 16, 8}, false, false},
                        Case{{2, 1, 24, 16}, {1, 3, 8, 24}, {2, 3, 16, 8}, true, true},
                        Case{{5, 7}, {9, 7}, {5, 9}, false, true}}) {
    auto shape = [](const Shape& s) {
      std::string text = "f32[";
      for (size_t i = 0; i < s.size(); ++i) text += (i ? "," : "") + std::to_string(s[i]);
      return text + "]";
    };
    std::string text =
        "graph @g(%a: " + shape(c.a) + " @cpu, %b: " + shape(c.b) +
        " @cpu) -> (y) {\n  %y = matmul %a, %b {transpose_a = " + (c.ta ? "true" : "false") +
        ", transpose_b = " + (c.tb ? "true" : "false") + "} : " + shape(c.out) +
        " @cpu\n  return %y\n}\n";
    auto graph = parseGraph(text, "matmul.gxir");
    const Op& op = *graph->ops().front();
    Tensor a = randomTensor(DType::F32, c.a, 4), b = randomTensor(DType::F32, c.b, 5);
    Tensor expected = evaluateReferenceOp(op, {&a, &b});
    std::optional<CudaGemm> gemm = describeGemm(op);
    ASSERT_TRUE(gemm);
    DeviceTensors device;
    void* out = device.upload(Tensor(DType::F32, c.out));
    CudaGemmRunner runner(0, false);
    runner.run(*gemm, device.upload(a), device.upload(b), nullptr, out, nullptr);
    checkCuda(cudaDeviceSynchronize(), "matmul");
    int64_t k = c.ta ? c.a[c.a.size() - 2] : c.a.back();
    expectOutputsCloseNormwise({{"y", device.download(out, DType::F32, c.out)}}, {{"y", expected}},
                               gputol::gemmTolerance(DType::F32, k));
  }
}

}  // namespace
}  // namespace gxc
