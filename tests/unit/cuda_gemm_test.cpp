// cuBLASLt GEMMs (runtime/cuda/cuda_gemm.h) against the reference interpreter: f32, f16 and bf16,
// the bias / relu / gelu epilogues, transposes and broadcast batches.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <sstream>

#include "cuda_test_helpers.h"
#include "cuda_tolerances.h"
#include "ir/kernel_steps.h"
#include "ir/parser.h"
#include "output_compare.h"
#include "random_tensor.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/reference/reference_ops.h"

namespace gxc {
namespace {

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
  gemm->fusedMembers = gemm->activation != GemmActivation::None;  // as describeGemm(step) says
  DeviceTensors device;
  void* dx = device.upload(x);
  void* dw = device.upload(w);
  void* db = device.upload(b);
  void* out = device.upload(Tensor(dtype, {96, 80}));
  CudaGemmRunner runner(0, /*allowTf32=*/false);
  EXPECT_EQ(runner.run(*gemm, dx, dw, db, out, nullptr), CudaGemmRunner::Done::Everything);
  checkCuda(cudaDeviceSynchronize(), "gemm");
  // The activation changes the GEMM's error by at most 1.13x (gelu's steepest slope).
  double tolerance = 1.2 * gputol::gemmTolerance(dtype, 64);
  expectOutputsCloseNormwise({{"y", device.download(out, dtype, {96, 80})}}, {{"y", expected}},
                             tolerance);

  // Without an algorithm for the epilogue: the plain GEMM onto the linear's bias, the
  // activation left to the caller (the executor's generated epilogue kernel).
  CudaGemmRunner fallback(0, /*allowTf32=*/false);
  fallback.pretendNoEpilogueAlgorithmForTests();
  void* plain = device.upload(Tensor(dtype, {96, 80}));
  EXPECT_EQ(fallback.run(*gemm, dx, dw, db, plain, nullptr),
            gemm->fusedMembers ? CudaGemmRunner::Done::AllButFusedMembers
                               : CudaGemmRunner::Done::Everything);
  checkCuda(cudaDeviceSynchronize(), "gemm without its epilogue");
  Tensor linearOnly = evaluateReferenceOp(linear, operands);
  expectOutputsCloseNormwise({{"y", device.download(plain, dtype, {96, 80})}}, {{"y", linearOnly}},
                             gputol::gemmTolerance(dtype, 64));
  EXPECT_EQ(fallback.stats().fallbacks, gemm->bias || gemm->fusedMembers ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(DtypesAndEpilogues, CudaGemmEpilogueTest,
                         ::testing::ValuesIn(allEpilogueCases()),
                         [](const ::testing::TestParamInfo<EpilogueCase>& info) {
                           std::ostringstream name;
                           name << info.param;
                           return name.str();
                         });

// GXC_ALLOW_TF32: what the f32 GEMMs compute in. No GPU needed to decide it.
// cuBLASLt is opened on first use, not linked (runtime/cuda/cublaslt_library.h): every
// function the cuda platform calls is found, and calls that need no GPU work without one.
TEST(CublasLtLibraryTest, OpensOnFirstUseWithEveryFunctionWithoutAGpu) {
  const CublasLtApi& api = cublasLt();
  EXPECT_STREQ(api.getStatusString(CUBLAS_STATUS_NOT_INITIALIZED),
               "the library was not initialized");
  EXPECT_EQ(&cublasLt(), &api);  // loaded once
  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(api.matrixLayoutCreate(&layout, CUDA_R_32F, 4, 8, 4), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.matrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);
}

TEST(CudaGemmComputeTypeTest, Tf32OnlyForF32OperandsAndOnlyWhenAllowed) {
  EXPECT_EQ(gemmComputeType(DType::F32, false), CUBLAS_COMPUTE_32F);
  EXPECT_EQ(gemmComputeType(DType::F32, true), CUBLAS_COMPUTE_32F_FAST_TF32);
  for (DType dtype : {DType::F16, DType::BF16})
    for (bool allow : {false, true}) EXPECT_EQ(gemmComputeType(dtype, allow), CUBLAS_COMPUTE_32F);
}

// f64 is DGEMM whatever GXC_ALLOW_TF32 says: double compute, alpha and beta.
TEST(CudaGemmComputeTypeTest, F64ComputesInDouble) {
  for (bool allow : {false, true})
    EXPECT_EQ(gemmComputeType(DType::F64, allow), CUBLAS_COMPUTE_64F);
  EXPECT_EQ(gemmScaleType(DType::F64), CUDA_R_64F);
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    EXPECT_EQ(gemmScaleType(dtype), CUDA_R_32F);
}

TEST(CudaGemmComputeTypeTest, AllowTf32ComesFromTheEnvironment) {
  ::setenv("GXC_ALLOW_TF32", "1", 1);
  EXPECT_TRUE(allowTf32FromEnvironment());
  ::setenv("GXC_ALLOW_TF32", "0", 1);
  EXPECT_FALSE(allowTf32FromEnvironment());
  ::setenv("GXC_ALLOW_TF32", "true", 1);
  EXPECT_FALSE(allowTf32FromEnvironment()) << "only 1 turns it on";
  ::unsetenv("GXC_ALLOW_TF32");
  EXPECT_FALSE(allowTf32FromEnvironment());
}

// With TF32 allowed, an f32 GEMM stays within what rounding its inputs to TF32 allows.
TEST(CudaGemmTest, Tf32GemmStaysWithinTf32Rounding) {
  GXC_REQUIRE_GPUS(1);
  auto graph = parseGraph(R"(
graph @g(%x: f32[96,64] @cpu, %w: f32[80,64] @cpu) -> (y) {
  %y = linear %x, %w {in_features = 64, out_features = 80} : f32[96,80] @cpu
  return %y
})",
                          "tf32.gxir");
  const Op& linear = *graph->ops().front();
  Tensor x = randomTensor(DType::F32, {96, 64}, 7), w = randomTensor(DType::F32, {80, 64}, 8);
  Tensor expected = evaluateReferenceOp(linear, {&x, &w});
  DeviceTensors device;
  void* out = device.upload(Tensor(DType::F32, {96, 80}));
  CudaGemmRunner runner(0, /*allowTf32=*/true);
  runner.run(*describeGemm(linear), device.upload(x), device.upload(w), nullptr, out, nullptr);
  checkCuda(cudaDeviceSynchronize(), "tf32 gemm");
  expectOutputsCloseNormwise({{"y", device.download(out, DType::F32, {96, 80})}}, {{"y", expected}},
                             gputol::tf32GemmTolerance(64));
}

// Descriptors and the heuristic's choice are made once per kind of call, then reused.
TEST(CudaGemmTest, PlansAreMadeOncePerKindOfCall) {
  GXC_REQUIRE_GPUS(1);
  auto graph = parseGraph(R"(
graph @g(%a: f32[32,16] @cpu, %b: f32[16,8] @cpu, %c: f32[8,32] @cpu) -> (p, q) {
  %p = matmul %a, %b : f32[32,8] @cpu
  %q = matmul %b, %c : f32[16,32] @cpu
  return %p, %q
})",
                          "plans.gxir");
  CudaGemm p = *describeGemm(*graph->ops()[0]), q = *describeGemm(*graph->ops()[1]);
  DeviceTensors device;
  void* a = device.upload(randomTensor(DType::F32, {32, 16}, 1));
  void* b = device.upload(randomTensor(DType::F32, {16, 8}, 2));
  void* c = device.upload(randomTensor(DType::F32, {8, 32}, 3));
  void* out = device.upload(Tensor(DType::F32, {32, 32}));
  CudaGemmRunner runner(0, false);
  for (int i = 0; i < 3; ++i) runner.run(p, a, b, nullptr, out, nullptr);
  EXPECT_EQ(runner.stats().plans, 1);
  runner.run(q, b, c, nullptr, out, nullptr);
  runner.run(q, b, c, nullptr, out, nullptr);
  EXPECT_EQ(runner.stats().plans, 2);
  EXPECT_EQ(runner.stats().fallbacks, 0);
  checkCuda(cudaDeviceSynchronize(), "plans");
}

// Batched matmuls: a shared right operand (stride 0), equal batches (one strided call), and
// batches that broadcast both ways (one call per matrix); with transposes.
// A 3-D a by one matrix is described as one GEMM over the stacked rows, so that a fused
// bias add is cuBLASLt's bias epilogue (a vector over the rows of one matrix); needs no GPU.
TEST(CudaGemmTest, RowStackedMatmulIsOneGemmWithTheBiasEpilogue) {
  auto graph = parseGraph(R"(
graph @g(%a: f32[3,16,24] @cuda:0, %b: f32[24,8] @cuda:0, %bias: f32[8] @cuda:0) -> (r) {
  %p = matmul %a, %b {kernel = "k0"} : f32[3,16,8] @cuda:0
  %q = add %bias, %p {kernel = "k0"} : f32[3,16,8] @cuda:0
  %r = relu %q {kernel = "k0"} : f32[3,16,8] @cuda:0
  return %r
})",
                          "stacked.gxir");
  KernelSteps steps(*graph);
  ASSERT_EQ(steps.steps().size(), 1u);
  CudaGemm gemm = describeGemm(steps.steps().front());
  EXPECT_EQ(gemm.a, (Shape{48, 24}));
  EXPECT_EQ(gemm.b, (Shape{24, 8}));
  EXPECT_EQ(gemm.out, (Shape{48, 8}));
  EXPECT_TRUE(gemm.bias);
  EXPECT_EQ(gemm.biasValue, graph->inputs()[2]);
  EXPECT_EQ(gemm.activation, GemmActivation::Relu);
  EXPECT_FALSE(gemm.generatedEpilogue);
}

TEST(CudaGemmTest, BatchedAndTransposedMatmulsMatchTheReference) {
  GXC_REQUIRE_GPUS(1);
  struct Case {
    Shape a, b, out;
    bool ta, tb;
  };
  for (const Case& c : {Case{{2, 3, 16, 24}, {24, 8}, {2, 3, 16, 8}, false, false},
                        Case{{4, 16, 24}, {4, 24, 8}, {4, 16, 8}, false, false},
                        Case{{2, 1, 24, 16}, {1, 3, 8, 24}, {2, 3, 16, 8}, true, true},
                        Case{{5, 7}, {9, 7}, {5, 9}, false, true},
                        Case{{3, 16, 24}, {8, 24}, {3, 16, 8}, false, true}}) {
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

// f64 linears (with the bias epilogue, and without it: the bias copied into the rows) and a
// batched matmul in double: operands 1 + O(1e-9), which f32 would round to 1, so the products
// are right to f64's roundoff only if no step goes through f32.
TEST(CudaGemmTest, F64GemmsComputeInDouble) {
  GXC_REQUIRE_GPUS(1);
  auto graph = parseGraph(R"(
graph @g(%x: f64[48,32] @cpu, %w: f64[40,32] @cpu, %b: f64[40] @cpu, %p: f64[3,48,32] @cpu) -> (y, z) {
  %y = linear %x, %w, %b {in_features = 32, out_features = 40} : f64[48,40] @cpu
  %z = matmul %p, %x {transpose_b = true} : f64[3,48,48] @cpu
  return %y, %z
})",
                          "f64.gxir");
  auto nearOne = [](const Shape& shape, unsigned seed) {
    Tensor t = randomTensor(DType::F64, shape, seed);
    for (int64_t i = 0; i < t.numel(); ++i) t.storeDouble(i, 1.0 + 1e-9 * t.loadDouble(i));
    return t;
  };
  Tensor x = nearOne({48, 32}, 11), w = randomTensor(DType::F64, {40, 32}, 12);
  Tensor b = nearOne({40}, 13), p = nearOne({3, 48, 32}, 14);
  const Op& linear = *graph->ops()[0];
  const Op& matmul = *graph->ops()[1];
  Tensor expectedY = evaluateReferenceOp(linear, {&x, &w, &b});
  Tensor expectedZ = evaluateReferenceOp(matmul, {&p, &x});
  DeviceTensors device;
  void *dx = device.upload(x), *dw = device.upload(w), *db = device.upload(b);
  for (bool epilogue : {true, false}) {
    CudaGemmRunner runner(0, /*allowTf32=*/true);
    if (!epilogue) runner.pretendNoEpilogueAlgorithmForTests();
    void* y = device.upload(Tensor(DType::F64, {48, 40}));
    void* z = device.upload(Tensor(DType::F64, {3, 48, 48}));
    EXPECT_EQ(runner.run(*describeGemm(linear), dx, dw, db, y, nullptr),
              CudaGemmRunner::Done::Everything);
    runner.run(*describeGemm(matmul), device.upload(p), dx, nullptr, z, nullptr);
    checkCuda(cudaDeviceSynchronize(), "f64 gemms");
    expectOutputsCloseNormwise({{"y", device.download(y, DType::F64, {48, 40})}},
                               {{"y", expectedY}}, gputol::gemmTolerance(DType::F64, 32));
    expectOutputsCloseNormwise({{"z", device.download(z, DType::F64, {3, 48, 48})}},
                               {{"z", expectedZ}}, gputol::gemmTolerance(DType::F64, 32));
  }
}

}  // namespace
}  // namespace gxc
