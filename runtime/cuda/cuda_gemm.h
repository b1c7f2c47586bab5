// GEMMs on the cuda platform: matmul and linear (with a bias and activation epilogue where
// the graph fused one) through cuBLASLt, on the op's stream.
//
// Row-major tensors meet column-major cuBLASLt through the identity (A B)^T = B^T A^T: a
// row-major M x N result is a column-major N x M one, so cuBLASLt computes D = op(B) op(A)
// with m = N, n = M, and the bias (1-D over the last dim, N) is its per-row bias vector.
// A 3-D a by one matrix (isRowStackedMatmul) is one GEMM over a's stacked rows, as a linear's
// leading dims are. Other batched operands become one strided-batch call where the batch
// broadcasts with a constant stride (equal batch dims, or a single matrix reused: stride 0),
// else one call per matrix.
//
// Precision: f32 uses CUBLAS_COMPUTE_32F, so results match the reference within f32
// rounding; GXC_ALLOW_TF32=1 opts in to CUBLAS_COMPUTE_32F_FAST_TF32 (10-bit mantissa inputs,
// as torch.backends.cuda.matmul.allow_tf32). f16 and bf16 are storage types: cuBLASLt
// accumulates in f32 and rounds once to the output type. f64 uses CUBLAS_COMPUTE_64F with
// double alpha and beta (cuBLAS's DGEMM), TF32 or not; the fuse pass gives an f64 GEMM no
// epilogue members (ir/fused_kernel.h), so only a linear's own bias rides with it.
//
// Plans: the descriptors of a call (operation, matrix layouts) and the algorithm cuBLASLt's
// heuristic chose are made once per GEMM shape, dtype, epilogue and operand alignment, and
// reused by every later call of that kind: a run of the same graph asks the heuristic nothing.
//
// No algorithm: where cuBLASLt has none for a GEMM with its epilogue (its heuristic answers
// nothing, or "not supported"), the run goes on without it: the plain GEMM, with a linear's
// own bias copied into the output rows beforehand and accumulated onto (beta = 1), and the
// members the fuse pass put after the GEMM left to the caller, which launches codegen's
// epilogue kernel for them (the kernel the host runs after its BLAS GEMM). Only a GEMM for
// which cuBLASLt has no algorithm at all is a runtime error.
//
// Requires: a CUDA device; operands of one floating dtype, contiguous, on that device.
// Guarantees: every call is asynchronous on the given stream; a cuBLAS failure is a runtime
// error (exit 3) naming the layer.
#pragma once

#include <cublasLt.h>
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
  // What cuBLASLt's epilogue stands for, should it have no algorithm with it: the linear's
  // own bias operand, and members fused after the GEMM (a bias add, an activation), which
  // codegen's epilogue kernel computes.
  bool linearBias = false;
  bool fusedMembers = false;
  // The fused members are no cuBLASLt epilogue (an exact gelu, a residual add, a longer
  // chain): the GEMM runs with the linear's own bias at most, then codegen's epilogue kernel
  // computes every fused member.
  bool generatedEpilogue = false;
  // The values the call reads, for the executor: a, b, and the bias (or null).
  const Value* aValue = nullptr;
  const Value* bValue = nullptr;
  const Value* biasValue = nullptr;
};

// matmul (transpose_a, transpose_b) and linear (x W^T + b) as GEMMs; nullopt for other ops.
std::optional<CudaGemm> describeGemm(const Op& op);
// A Gemm step (ir/kernel_steps.h): its GEMM with the fused kernel's epilogue folded in where
// cuBLASLt has it (a matmul's bias `add`, then relu or gelu(tanh)); any other epilogue the fuse
// pass allows (ir/fused_kernel.h) is left to the generated epilogue kernel
// (generatedEpilogue).
CudaGemm describeGemm(const KernelStep& step);

// Whether GXC_ALLOW_TF32=1 is set.
bool allowTf32FromEnvironment();

// What a GEMM of `dtype` computes in: full f32, or TF32 tensor cores for f32 operands where
// GXC_ALLOW_TF32 allows them; f16 and bf16 always accumulate in f32; f64 in f64.
cublasComputeType_t gemmComputeType(DType dtype, bool allowTf32);
// The type of alpha, beta and the bias epilogue's arithmetic: double for f64, else float.
cudaDataType_t gemmScaleType(DType dtype);

// One per GPU: a cuBLASLt handle, its workspace on that device, and the plans it has made.
class CudaGemmRunner {
 public:
  // What `run` did: the whole GEMM step, or all but the members fused after the GEMM, which
  // the caller must then apply to `out` (cuBLASLt has no such epilogue, or no algorithm with
  // it).
  enum class Done { Everything, AllButFusedMembers };

  struct Stats {
    int64_t plans = 0;      // descriptors made and heuristics asked: once per kind of call
    int64_t fallbacks = 0;  // calls run without cuBLASLt's epilogue
  };

  CudaGemmRunner(int cudaDevice, bool allowTf32);
  ~CudaGemmRunner();
  CudaGemmRunner(const CudaGemmRunner&) = delete;
  CudaGemmRunner& operator=(const CudaGemmRunner&) = delete;

  Done run(const CudaGemm& gemm, const void* a, const void* b, const void* bias, void* out,
           cudaStream_t stream);

  const Stats& stats() const;
  // For tests only: from now on, act as if cuBLASLt's heuristic had no algorithm for any GEMM
  // with an epilogue, so that the fallback (which real GPUs may never need) is exercised.
  void pretendNoEpilogueAlgorithmForTests();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gxc
