// The cuBLASLt side of runtime/cuda/cuda_gemm.h: plans made once per kind of call, the calls,
// and the plain GEMM that stands in when cuBLASLt has no algorithm with an epilogue.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"

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
    case DType::F64:
      return CUDA_R_64F;
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

template <typename T>
void setAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                  const T& value, const std::string& what) {
  checkCublas(cublasLt().matmulDescSetAttribute(desc, attribute, &value, sizeof(value)), what);
}

void layout(cublasLtMatrixLayout_t* out, cudaDataType_t type, int64_t rows, int64_t cols,
            int64_t ld, int32_t batch, int64_t stride, const std::string& what) {
  checkCublas(cublasLt().matrixLayoutCreate(out, type, rows, cols, ld), what);
  if (batch <= 1) return;
  checkCublas(cublasLt().matrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                  sizeof(batch)),
              what);
  checkCublas(cublasLt().matrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof(stride)),
              what);
}

// A GEMM's sizes as cuBLASLt sees them, and how its batch is walked: one strided-batch call
// where both operands step evenly, else one call per result matrix.
struct Geometry {
  int64_t m = 0, n = 0, k = 0;
  int64_t element = 4;
  std::vector<int64_t> aIndex, bIndex;  // per result matrix, the operand matrix it reads
  bool strided = true;
  int64_t calls = 1;
  int32_t batch = 1;
  std::optional<int64_t> aStep, bStep;

  explicit Geometry(const CudaGemm& gemm) {
    size_t ra = gemm.a.size(), rb = gemm.b.size(), ro = gemm.out.size();
    m = gemm.transposeA ? gemm.a[ra - 1] : gemm.a[ra - 2];
    k = gemm.transposeA ? gemm.a[ra - 2] : gemm.a[ra - 1];
    n = gemm.transposeB ? gemm.b[rb - 2] : gemm.b[rb - 1];
    GXC_CHECK(gemm.out[ro - 2] == m && gemm.out[ro - 1] == n, "layer '{}': GEMM shapes",
              gemm.layer);
    element = static_cast<int64_t>(dtypeSize(gemm.dtype));
    aIndex = matrixIndices(gemm.a, gemm.out);
    bIndex = matrixIndices(gemm.b, gemm.out);
    aStep = constantStep(aIndex);
    bStep = constantStep(bIndex);
    strided = aStep && bStep;
    calls = strided ? 1 : static_cast<int64_t>(aIndex.size());
    batch = strided ? static_cast<int32_t>(aIndex.size()) : 1;
  }
};

// One kind of call, made once: its descriptors and the algorithm cuBLASLt's heuristic chose
// (none: it had none). cuBLASLt's A is our b and its B our a (see the header); C is D.
struct Plan {
  Geometry geometry;
  DType dtype;
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  std::optional<cublasLtMatmulAlgo_t> algo;

  explicit Plan(const CudaGemm& gemm) : geometry(gemm), dtype(gemm.dtype) {}
  ~Plan() {
    if (d) cublasLt().matrixLayoutDestroy(d);
    if (b) cublasLt().matrixLayoutDestroy(b);
    if (a) cublasLt().matrixLayoutDestroy(a);
    if (operation) cublasLt().matmulDescDestroy(operation);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
};

struct Preference {
  cublasLtMatmulPreference_t handle = nullptr;
  ~Preference() {
    if (handle) cublasLt().matmulPreferenceDestroy(handle);
  }
};

// The kind of a call: what its descriptors and algorithm depend on. Alignments are those of
// cuBLASLt's A, B and C/D (alignmentOf).
using PlanKey = std::tuple<DType, Shape, Shape, Shape, bool, bool, cublasLtEpilogue_t, uint32_t,
                           uint32_t, uint32_t>;

}  // namespace

struct CudaGemmRunner::Impl {
  int device = 0;
  bool allowTf32 = false;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
  Stats stats;
  bool noEpilogueAlgorithm = false;  // pretendNoEpilogueAlgorithmForTests

  const Plan& planFor(const CudaGemm& gemm, cublasLtEpilogue_t epilogue,
                      const std::array<uint32_t, 3>& alignments, const void* bias,
                      const std::string& what);
  void matmul(const Plan& plan, const void* a, const void* b, void* out, double beta,
              cudaStream_t stream, const std::string& what);
};

const Plan& CudaGemmRunner::Impl::planFor(const CudaGemm& gemm, cublasLtEpilogue_t epilogue,
                                          const std::array<uint32_t, 3>& alignments,
                                          const void* bias, const std::string& what) {
  PlanKey key{gemm.dtype,      gemm.a,   gemm.b,        gemm.out,      gemm.transposeA,
              gemm.transposeB, epilogue, alignments[0], alignments[1], alignments[2]};
  if (auto found = plans.find(key); found != plans.end()) return *found->second;
  auto plan = std::make_unique<Plan>(gemm);
  const Geometry& g = plan->geometry;
  cudaDataType_t type = cudaType(gemm.dtype, gemm.layer);
  checkCublas(cublasLt().matmulDescCreate(&plan->operation, gemmComputeType(gemm.dtype, allowTf32),
                                          gemmScaleType(gemm.dtype)),
              what);
  cublasOperation_t opA = gemm.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = gemm.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  setAttribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSA, opA, what);
  setAttribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSB, opB, what);
  setAttribute(plan->operation, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, what);
  // The heuristic sees the call as it will be made; each call sets its own bias again.
  if (bias) setAttribute(plan->operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, what);

  // Stored matrices, column-major: our B is (transposeB ? K x N : N x K), our A is
  // (transposeA ? M x K : K x M), the result N x M.
  int64_t m = g.m, n = g.n, k = g.k;
  layout(&plan->a, type, gemm.transposeB ? k : n, gemm.transposeB ? n : k, gemm.transposeB ? k : n,
         g.batch, g.bStep.value_or(0) * k * n, what);
  layout(&plan->b, type, gemm.transposeA ? m : k, gemm.transposeA ? k : m, gemm.transposeA ? m : k,
         g.batch, g.aStep.value_or(0) * m * k, what);
  layout(&plan->d, type, n, m, n, g.batch, m * n, what);

  Preference preference;
  checkCublas(cublasLt().matmulPreferenceCreate(&preference.handle), what);
  uint64_t workspaceBytes = kWorkspaceBytes;
  checkCublas(cublasLt().matmulPreferenceSetAttribute(preference.handle,
                                                      CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspaceBytes, sizeof(workspaceBytes)),
              what);
  const cublasLtMatmulPreferenceAttributes_t alignmentAttributes[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (size_t i = 0; i < 4; ++i) {
    uint32_t bytes = alignments[std::min<size_t>(i, 2)];
    checkCublas(cublasLt().matmulPreferenceSetAttribute(preference.handle, alignmentAttributes[i],
                                                        &bytes, sizeof(bytes)),
                what);
  }
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  cublasStatus_t status =
      cublasLt().matmulAlgoGetHeuristic(handle, plan->operation, plan->a, plan->b, plan->d, plan->d,
                                        preference.handle, 1, &heuristic, &found);
  // "Not supported" is how cuBLASLt may say that it has no algorithm: not an error here.
  if (status != CUBLAS_STATUS_NOT_SUPPORTED) checkCublas(status, what);
  if (status == CUBLAS_STATUS_SUCCESS && found > 0) plan->algo = heuristic.algo;
  ++stats.plans;
  return *(plans[key] = std::move(plan));
}

void CudaGemmRunner::Impl::matmul(const Plan& plan, const void* a, const void* b, void* out,
                                  double beta, cudaStream_t stream, const std::string& what) {
  const Geometry& g = plan.geometry;
  // alpha and beta are of the scale type: double for f64, float for the others.
  const bool wide = plan.dtype == DType::F64;
  const double alphaWide = 1.0, betaWide = beta;
  const float alphaNarrow = 1.0f, betaNarrow = static_cast<float>(beta);
  const void* alpha = wide ? static_cast<const void*>(&alphaWide) : &alphaNarrow;
  const void* betaOfType = wide ? static_cast<const void*>(&betaWide) : &betaNarrow;
  const auto* aBytes = static_cast<const std::byte*>(a);
  const auto* bBytes = static_cast<const std::byte*>(b);
  auto* outBytes = static_cast<std::byte*>(out);
  for (int64_t call = 0; call < g.calls; ++call) {
    // Per-matrix calls (a batch that broadcasts unevenly) offset each operand by hand.
    const void* aMatrix = aBytes + (g.strided ? 0 : g.aIndex[call] * g.m * g.k * g.element);
    const void* bMatrix = bBytes + (g.strided ? 0 : g.bIndex[call] * g.k * g.n * g.element);
    void* outMatrix = outBytes + call * g.m * g.n * g.element;
    checkCublas(cublasLt().matmul(handle, plan.operation, alpha, bMatrix, plan.a, aMatrix, plan.b,
                                  betaOfType, outMatrix, plan.d, outMatrix, plan.d, &*plan.algo,
                                  workspace, kWorkspaceBytes, stream),
                what);
  }
}

CudaGemmRunner::CudaGemmRunner(int cudaDevice, bool allowTf32) : impl_(std::make_unique<Impl>()) {
  impl_->device = cudaDevice;
  impl_->allowTf32 = allowTf32;
  CudaDeviceGuard guard(cudaDevice);
  std::string where = fmt::format("GPU {}", cudaDevice);
  checkCublas(cublasLt().create(&impl_->handle), "cublasLtCreate on " + where);
  checkCuda(cudaMalloc(&impl_->workspace, kWorkspaceBytes), "cuBLASLt workspace on " + where);
}

CudaGemmRunner::~CudaGemmRunner() {
  CudaDeviceGuard guard(impl_->device, /*quiet=*/true);
  impl_->plans.clear();
  if (impl_->workspace) cudaFree(impl_->workspace);
  if (impl_->handle) cublasLt().destroy(impl_->handle);
}

const CudaGemmRunner::Stats& CudaGemmRunner::stats() const { return impl_->stats; }

void CudaGemmRunner::pretendNoEpilogueAlgorithmForTests() { impl_->noEpilogueAlgorithm = true; }

CudaGemmRunner::Done CudaGemmRunner::run(const CudaGemm& gemm, const void* a, const void* b,
                                         const void* bias, void* out, cudaStream_t stream) {
  std::string what = fmt::format("layer '{}' on GPU {}", gemm.layer, impl_->device);
  Geometry g(gemm);
  std::array<uint32_t, 3> alignments = {alignmentOf(b, g.k * g.n * g.element),
                                        alignmentOf(a, g.m * g.k * g.element),
                                        alignmentOf(out, g.m * g.n * g.element)};
  cublasLtEpilogue_t epilogue = epilogueOf(gemm);
  bool withEpilogue = epilogue != CUBLASLT_EPILOGUE_DEFAULT;
  if (!withEpilogue || !impl_->noEpilogueAlgorithm) {
    const Plan& plan = impl_->planFor(gemm, epilogue, alignments, gemm.bias ? bias : nullptr, what);
    if (plan.algo) {
      if (gemm.bias) setAttribute(plan.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, what);
      impl_->matmul(plan, a, b, out, 0.0, stream, what);
      return gemm.generatedEpilogue ? Done::AllButFusedMembers : Done::Everything;
    }
    if (!withEpilogue) runtimeError({}, "cuBLASLt has no algorithm for {}", what);
  }
  // No algorithm with the epilogue: the plain GEMM, onto the linear's bias where it has one.
  const Plan& plain = impl_->planFor(gemm, CUBLASLT_EPILOGUE_DEFAULT, alignments, nullptr, what);
  if (!plain.algo)
    runtimeError({}, "cuBLASLt has no algorithm for {}, even without its epilogue", what);
  ++impl_->stats.fallbacks;
  double beta = 0.0;
  if (gemm.linearBias) {
    // The bias into every row of the result (row 0, then doubling copies), so that the GEMM
    // accumulates onto it. A linear's result is 2-D: g.m rows of g.n.
    auto* rows = static_cast<std::byte*>(out);
    size_t rowBytes = static_cast<size_t>(g.n * g.element);
    checkCuda(cudaMemcpyAsync(rows, bias, rowBytes, cudaMemcpyDeviceToDevice, stream),
              "bias of " + what);
    for (int64_t filled = 1; filled < g.m; filled *= 2) {
      size_t count = static_cast<size_t>(std::min(filled, g.m - filled));
      checkCuda(cudaMemcpyAsync(rows + filled * rowBytes, rows, count * rowBytes,
                                cudaMemcpyDeviceToDevice, stream),
                "bias of " + what);
    }
    beta = 1.0;
  }
  impl_->matmul(plain, a, b, out, beta, stream, what);
  return gemm.fusedMembers ? Done::AllButFusedMembers : Done::Everything;
}

}  // namespace gxc
