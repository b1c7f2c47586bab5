#include "runtime/cuda/cuda_gemm.h"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/fused_kernel.h"
#include "runtime/cuda/cuda_check.h"

namespace gxc {
namespace {

constexpr size_t kWorkspaceBytes = static_cast<size_t>(kCublasLtWorkspaceBytes);

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end; ++i) result *= shape[i];
  return result;
}

// For each matrix of the result's batch, the index of the operand's matrix that
// broadcasting pairs with it (batch dims right-aligned, size-1 dims repeated).
std::vector<int64_t> matrixIndices(const Shape& operand, const Shape& out) {
  size_t operandBatch = operand.size() - 2, outBatch = out.size() - 2;
  int64_t count = product(out, 0, outBatch);
  std::vector<int64_t> indices;
  for (int64_t n = 0; n < count; ++n) {
    int64_t rest = n, index = 0, stride = 1;
    for (size_t d = outBatch; d-- > 0;) {
      int64_t coordinate = rest % out[d];
      rest /= out[d];
      size_t fromRight = outBatch - 1 - d;
      if (fromRight >= operandBatch) continue;
      int64_t dim = operand[operandBatch - 1 - fromRight];
      index += (dim == 1 ? 0 : coordinate) * stride;
      stride *= dim;
    }
    indices.push_back(index);
  }
  return indices;
}

// The constant step between consecutive matrices, if there is one (0: one matrix reused).
std::optional<int64_t> constantStep(const std::vector<int64_t>& indices) {
  if (indices.size() < 2) return 0;
  int64_t step = indices[1] - indices[0];
  for (size_t i = 1; i < indices.size(); ++i)
    if (indices[i] - indices[i - 1] != step || indices[0] != 0) return std::nullopt;
  return step;
}

cudaDataType_t cudaType(DType dtype, const std::string& layer) {
  switch (dtype) {
    case DType::F32:
      return CUDA_R_32F;
    case DType::F16:
      return CUDA_R_16F;
    case DType::BF16:
      return CUDA_R_16BF;
    default:
      GXC_CHECK(false, "layer '{}': GEMM of {} operands", layer, dtypeName(dtype));
  }
  return CUDA_R_32F;
}

cublasLtEpilogue_t epilogueOf(const CudaGemm& gemm) {
  switch (gemm.activation) {
    case GemmActivation::None:
      return gemm.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case GemmActivation::Relu:
      return gemm.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case GemmActivation::Gelu:
      return gemm.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

// The largest power of two, up to 256, that divides every address `count` matrices of
// `matrixBytes` starting at `base` can have: what cuBLASLt may assume of the operand (its
// default preference, 256, would admit kernels that fault on a less aligned one).
uint32_t alignmentOf(const void* base, int64_t matrixBytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(base) | static_cast<uint64_t>(matrixBytes) | 256;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

// RAII for the cuBLASLt descriptors of one call.
struct Descriptors {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~Descriptors() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (operation) cublasLtMatmulDescDestroy(operation);
  }
};

template <typename T>
void setAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                  const T& value, const std::string& what) {
  checkCublas(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)), what);
}

void layout(cublasLtMatrixLayout_t* out, cudaDataType_t type, int64_t rows, int64_t cols,
            int64_t ld, int32_t batch, int64_t stride, const std::string& what) {
  checkCublas(cublasLtMatrixLayoutCreate(out, type, rows, cols, ld), what);
  if (batch <= 1) return;
  checkCublas(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                               sizeof(batch)),
              what);
  checkCublas(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                               &stride, sizeof(stride)),
              what);
}

}  // namespace

std::optional<CudaGemm> describeGemm(const Op& op) {
  if (op.kind != OpKind::Matmul && op.kind != OpKind::Linear) return std::nullopt;
  CudaGemm gemm;
  gemm.layer = op.layerName();
  gemm.dtype = op.result->type.dtype;
  if (op.kind == OpKind::Matmul) {
    gemm.a = op.operands[0]->type.shape;
    gemm.b = op.operands[1]->type.shape;
    gemm.out = op.result->type.shape;
    gemm.transposeA = op.attrs.getBool("transpose_a", false);
    gemm.transposeB = op.attrs.getBool("transpose_b", false);
    gemm.aValue = op.operands[0];
    gemm.bValue = op.operands[1];
    return gemm;
  }
  // linear: x [..., K] is a stack of M rows; W [N, K] is used transposed; y [..., N].
  const Shape& x = op.operands[0]->type.shape;
  int64_t rows = product(x, 0, x.size() - 1);
  gemm.a = {rows, x.back()};
  gemm.b = op.operands[1]->type.shape;
  gemm.out = {rows, op.result->type.shape.back()};
  gemm.transposeB = true;
  gemm.bias = op.operands.size() > 2;
  gemm.aValue = op.operands[0];
  gemm.bValue = op.operands[1];
  gemm.biasValue = gemm.bias ? op.operands[2] : nullptr;
  return gemm;
}

CudaGemm describeGemm(const KernelStep& step) {
  GXC_CHECK(step.kind == StepKind::Gemm, "'{}' is not a GEMM step", step.root()->layerName());
  const Op& first = *step.first();
  CudaGemm gemm = *describeGemm(first);
  // Each member reads the one before it; what fits where is decided in member order.
  const Op* previous = &first;
  for (size_t i = 1; i < step.ops.size(); ++i) {
    const Op& member = *step.ops[i];
    if (i == 1 && isGemmBiasAdd(first, member)) {
      gemm.bias = true;
      gemm.biasValue = member.operands[0] == first.result ? member.operands[1] : member.operands[0];
    } else if (gemm.activation == GemmActivation::None && isGemmActivation(member)) {
      gemm.activation = member.kind == OpKind::Relu ? GemmActivation::Relu : GemmActivation::Gelu;
    } else {
      GXC_CHECK(false, "kernel {}: '{}' ({}) is no cuBLASLt epilogue", step.kernelAttr,
                member.layerName(), opName(member.kind));
    }
    GXC_CHECK(std::find(member.operands.begin(), member.operands.end(), previous->result) !=
                  member.operands.end(),
              "kernel {}: '{}' does not read '{}'", step.kernelAttr, member.layerName(),
              previous->layerName());
    previous = &member;
  }
  return gemm;
}

bool allowTf32FromEnvironment() {
  const char* value = std::getenv("GXC_ALLOW_TF32");
  return value && std::string_view(value) == "1";
}

struct CudaGemmRunner::Impl {
  int device;
  bool allowTf32;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

CudaGemmRunner::CudaGemmRunner(int cudaDevice, bool allowTf32)
    : impl_(std::make_unique<Impl>(Impl{cudaDevice, allowTf32})) {
  CudaDeviceGuard guard(cudaDevice);
  std::string where = fmt::format("GPU {}", cudaDevice);
  checkCublas(cublasLtCreate(&impl_->handle), "cublasLtCreate on " + where);
  checkCuda(cudaMalloc(&impl_->workspace, kWorkspaceBytes), "cuBLASLt workspace on " + where);
}

CudaGemmRunner::~CudaGemmRunner() {
  CudaDeviceGuard guard(impl_->device, /*quiet=*/true);
  if (impl_->workspace) cudaFree(impl_->workspace);
  if (impl_->handle) cublasLtDestroy(impl_->handle);
}

void CudaGemmRunner::run(const CudaGemm& gemm, const void* a, const void* b, const void* bias,
                         void* out, cudaStream_t stream) {
  std::string what = fmt::format("layer '{}' on GPU {}", gemm.layer, impl_->device);
  size_t ra = gemm.a.size(), rb = gemm.b.size(), ro = gemm.out.size();
  int64_t m = gemm.transposeA ? gemm.a[ra - 1] : gemm.a[ra - 2];
  int64_t k = gemm.transposeA ? gemm.a[ra - 2] : gemm.a[ra - 1];
  int64_t n = gemm.transposeB ? gemm.b[rb - 2] : gemm.b[rb - 1];
  GXC_CHECK(gemm.out[ro - 2] == m && gemm.out[ro - 1] == n, "{}: GEMM shapes", what);
  cudaDataType_t type = cudaType(gemm.dtype, gemm.layer);
  size_t element = gemm.dtype == DType::F32 ? 4 : 2;

  std::vector<int64_t> aIndex = matrixIndices(gemm.a, gemm.out);
  std::vector<int64_t> bIndex = matrixIndices(gemm.b, gemm.out);
  std::optional<int64_t> aStep = constantStep(aIndex), bStep = constantStep(bIndex);
  bool strided = aStep && bStep;
  int64_t calls = strided ? 1 : static_cast<int64_t>(aIndex.size());
  int32_t batch = strided ? static_cast<int32_t>(aIndex.size()) : 1;

  Descriptors desc;
  cublasComputeType_t compute = gemm.dtype == DType::F32 && impl_->allowTf32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  checkCublas(cublasLtMatmulDescCreate(&desc.operation, compute, CUDA_R_32F), what);
  // cuBLASLt's A is our B and its B our A (see the header).
  cublasOperation_t opA = gemm.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = gemm.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  setAttribute(desc.operation, CUBLASLT_MATMUL_DESC_TRANSA, opA, what);
  setAttribute(desc.operation, CUBLASLT_MATMUL_DESC_TRANSB, opB, what);
  setAttribute(desc.operation, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogueOf(gemm), what);
  if (gemm.bias) setAttribute(desc.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, what);

  // Stored matrices, column-major: our B is (transposeB ? K x N : N x K), our A is
  // (transposeA ? M x K : K x M), the result N x M.
  layout(&desc.a, type, gemm.transposeB ? k : n, gemm.transposeB ? n : k, gemm.transposeB ? k : n,
         batch, bStep.value_or(0) * k * n, what);
  layout(&desc.b, type, gemm.transposeA ? m : k, gemm.transposeA ? k : m, gemm.transposeA ? m : k,
         batch, aStep.value_or(0) * m * k, what);
  layout(&desc.d, type, n, m, n, batch, m * n, what);

  checkCublas(cublasLtMatmulPreferenceCreate(&desc.preference), what);
  uint64_t workspace = kWorkspaceBytes;
  checkCublas(
      cublasLtMatmulPreferenceSetAttribute(
          desc.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)),
      what);
  // cuBLASLt's A is our b, its B our a; C and D are the output.
  int64_t matrixBytes[] = {k * n * static_cast<int64_t>(element),
                           m * k * static_cast<int64_t>(element),
                           m * n * static_cast<int64_t>(element)};
  std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignmentOf(b, matrixBytes[0])},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignmentOf(a, matrixBytes[1])},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignmentOf(out, matrixBytes[2])},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignmentOf(out, matrixBytes[2])}};
  for (const auto& [attribute, bytes] : alignments)
    checkCublas(
        cublasLtMatmulPreferenceSetAttribute(desc.preference, attribute, &bytes, sizeof(bytes)),
        what);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  checkCublas(cublasLtMatmulAlgoGetHeuristic(impl_->handle, desc.operation, desc.a, desc.b, desc.d,
                                             desc.d, desc.preference, 1, &heuristic, &found),
              what);
  if (found == 0) runtimeError({}, "cuBLASLt has no algorithm for {}", what);

  float alpha = 1.0f, beta = 0.0f;
  const auto* aBytes = static_cast<const std::byte*>(a);
  const auto* bBytes = static_cast<const std::byte*>(b);
  auto* outBytes = static_cast<std::byte*>(out);
  for (int64_t call = 0; call < calls; ++call) {
    // Per-matrix calls (a batch that broadcasts unevenly) offset each operand by hand.
    const void* aMatrix = aBytes + (strided ? 0 : aIndex[call] * m * k * element);
    const void* bMatrix = bBytes + (strided ? 0 : bIndex[call] * k * n * element);
    void* outMatrix = outBytes + call * m * n * element;
    checkCublas(cublasLtMatmul(impl_->handle, desc.operation, &alpha, bMatrix, desc.a, aMatrix,
                               desc.b, &beta, outMatrix, desc.d, outMatrix, desc.d, &heuristic.algo,
                               impl_->workspace, kWorkspaceBytes, stream),
                what);
  }
}

}  // namespace gxc
