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

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end; ++i) result *= shape[i];
  return result;
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
    if (isRowStackedMatmul(op)) {  // one GEMM over the stacked rows: a bias epilogue applies
      gemm.a = {gemm.a[0] * gemm.a[1], gemm.a[2]};
      gemm.out = {gemm.out[0] * gemm.out[1], gemm.out[2]};
    }
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
  gemm.linearBias = gemm.bias;
  gemm.aValue = op.operands[0];
  gemm.bValue = op.operands[1];
  gemm.biasValue = gemm.bias ? op.operands[2] : nullptr;
  return gemm;
}

CudaGemm describeGemm(const KernelStep& step) {
  GXC_CHECK(step.kind == StepKind::Gemm, "'{}' is not a GEMM step", step.root()->layerName());
  const Op& first = *step.first();
  const CudaGemm plain = *describeGemm(first);
  CudaGemm gemm = plain;
  gemm.fusedMembers = step.ops.size() > 1;
  // Each member reads the one before it; what fits cuBLASLt's epilogues is decided in member
  // order, and the first member that does not leaves the whole epilogue to generated code.
  const Op* previous = &first;
  for (size_t i = 1; i < step.ops.size(); ++i) {
    const Op& member = *step.ops[i];
    GXC_CHECK(std::find(member.operands.begin(), member.operands.end(), previous->result) !=
                  member.operands.end(),
              "kernel {}: '{}' does not read '{}'", step.kernelAttr, member.layerName(),
              previous->layerName());
    if (i == 1 && isGemmBiasAdd(first, member)) {
      gemm.bias = true;
      gemm.biasValue = residualOf(member, first.result);
    } else if (gemm.activation == GemmActivation::None && isGemmActivation(member)) {
      gemm.activation = member.kind == OpKind::Relu ? GemmActivation::Relu : GemmActivation::Gelu;
    } else {
      GXC_CHECK(isGemmEpilogueMember(previous->result, member),
                "kernel {}: '{}' ({}) may not follow a GEMM", step.kernelAttr, member.layerName(),
                opName(member.kind));
      CudaGemm generated = plain;
      generated.fusedMembers = true;
      generated.generatedEpilogue = true;
      return generated;
    }
    previous = &member;
  }
  return gemm;
}

bool allowTf32FromEnvironment() {
  const char* value = std::getenv("GXC_ALLOW_TF32");
  return value && std::string_view(value) == "1";
}

cublasComputeType_t gemmComputeType(DType dtype, bool allowTf32) {
  if (dtype == DType::F64) return CUBLAS_COMPUTE_64F;
  return dtype == DType::F32 && allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

cudaDataType_t gemmScaleType(DType dtype) { return dtype == DType::F64 ? CUDA_R_64F : CUDA_R_32F; }

}  // namespace gxc
