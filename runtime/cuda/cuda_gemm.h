// GEMMs on the cuda platform: matmul and linear (with a bias and activation epilogue where
// the graph fused one) through cuBLASLt, on the op's stream.
//
// Row-major tensors meet column-major cuBLASLt through the identity (A B)^T = B^T A^T: a
// row-major M x N result is a column-major N x M one, so cuBLASLt computes D = op(B) op(A)
// with m = N, n = M, and the bias (1-D over the last dim, N) is its per-row bias vector.
// Batched operands become one strided-batch call where the batch broadcasts with a constant
// stride (equal batch dims, or a single matrix reused: stride 0), else one call per matrix.
//
// Precision: f32 uses CUBLAS_COMPUTE_32F, so results match the reference within f32
// rounding; GXC_ALLOW_TF32=1 opts in to CUBLAS_COMPUTE_32F_FAST_TF32 (10-bit mantissa inputs,
// as torch.backends.cuda.matmul.allow_tf32). f16 and bf16 are storage types: cuBLASLt
// accumulates in f32 and rounds once to the output type.
//
// Requires: a CUDA device; operands of one floating dtype, contiguous, on that device.
// Guarantees: every call is asynchronous on the given stream; a cuBLAS failure is a runtime
// error (exit 3) naming the layer.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "ir/kernel_steps.h"

namespace gxc {

// cuBLASLt's workspace on each GPU of a run (NVIDIA's recommendation for Hopper), allocated
// beside the caching allocator's memory: usableGpuMemory (gpu_devices.h) leaves it out.
inline constexpr int64_t kCublasLtWorkspaceBytes = int64_t{32} << 20;

enum class GemmActivation { None, Relu, Gelu };  // Gelu: the tanh approximation, as cuBLASLt's

struct CudaGemm {
  std::string layer;  // for messages
  DType dtype = DType::F32;
  Shape a, b, out;  // as stored, row-major; out = op(a) op(b) (+ bias) with broadcast batches
  bool transposeA = false;
  bool transposeB = false;
  bool bias = false;  // a 1-D bias over out's last dim
  GemmActivation activation = GemmActivation::None;
  // The values the call reads, for the executor: a, b, and the bias (or null).
  const Value* aValue = nullptr;
  const Value* bValue = nullptr;
  const Value* biasValue = nullptr;
};

// matmul (transpose_a, transpose_b) and linear (x W^T + b) as GEMMs; nullopt for other ops.
std::optional<CudaGemm> describeGemm(const Op& op);
// A Gemm step (ir/kernel_steps.h): its GEMM with the fused kernel's epilogue folded in,
// as the fuse pass allows it (ir/fused_kernel.h): a matmul's bias `add`, then relu or
// gelu(tanh). An epilogue cuBLASLt cannot apply is a gxc bug (GXC_CHECK).
CudaGemm describeGemm(const KernelStep& step);

// Whether GXC_ALLOW_TF32=1 is set.
bool allowTf32FromEnvironment();

// One per GPU: a cuBLASLt handle and its workspace on that device.
class CudaGemmRunner {
 public:
  CudaGemmRunner(int cudaDevice, bool allowTf32);
  ~CudaGemmRunner();
  CudaGemmRunner(const CudaGemmRunner&) = delete;
  CudaGemmRunner& operator=(const CudaGemmRunner&) = delete;

  void run(const CudaGemm& gemm, const void* a, const void* b, const void* bias, void* out,
           cudaStream_t stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gxc
