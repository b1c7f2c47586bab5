// How close the GPU tests hold the cuda platform to the reference interpreter, and why. Each
// tolerance is relative, as output_compare.h measures it, and follows from how the GPU computes.
//
// Generated kernels: NVRTC compiles them with --fmad=false (codegen/nvrtc_compiler.cpp) and the
// host with -ffp-contract=off, so +, -, *, / and sqrt (IEEE on both) round identically; GEMMs:
// cuBLASLt, a library, which fuses its multiply-adds whatever NVRTC is told.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ir/graph.h"
#include "ir/kernel_steps.h"

namespace gxc::gputol {

// Half an ulp of 1 in each format: the most one rounding changes a value, relatively.
inline constexpr double kF32Roundoff = 0x1p-24;
inline constexpr double kTf32Roundoff = 0x1p-11;  // 10 stored mantissa bits
inline constexpr double kF16Roundoff = 0x1p-11;
inline constexpr double kBf16Roundoff = 0x1p-8;
inline constexpr double kF64Roundoff = 0x1p-53;

// Per element, relative to max(1, |expected|). With --fmad=false a kernel's arithmetic is the
// host's, so it differs from the host build of the same text only by CUDA's math functions
// (expf, tanhf, erff: within 2 ulp) and a block reduction's order (a tree, not a loop): at
// the tests' sizes well inside the 1e-5 (about 84 ulp of 1) that holds the host's kernels to the
// reference, so the GPU gets the same bound. f16 and bf16 store each value rounded: 1e-2 is bf16's
// ulp (2^-7) with room for the one extra rounding a fused kernel's stored input may take.
// f64 kernels compute in double: CUDA's double math functions are within 2 ulp, so the
// fixtures' own f64 bound (1e-12, about 4500 ulp of 1) holds them too.
inline double generatedKernelTolerance(DType dtype) {
  if (dtype == DType::F64) return 1e-12;
  return dtype == DType::F32 ? 1e-5 : 1e-2;
}

// Normwise (output_compare.h), for a GEMM of inner dimension k against the reference's double
// sums: a k-term f32 dot product is within k·u·Σ|a_i b_i| of the exact one whatever the order
// (Higham, Accuracy and Stability of Numerical Algorithms, eq. 3.5), and for independent
// operands Σ|a_i b_i| is about sqrt(k) times a typical |result|, which the output's largest
// |value| exceeds: k^1.5·u. A narrower output adds its own last rounding, one ulp (2u).
inline double gemmTolerance(DType dtype, int64_t k) {
  // f64 accumulates in double (CUBLAS_COMPUTE_64F): the same bound with double's roundoff.
  if (dtype == DType::F64) return std::pow(static_cast<double>(k), 1.5) * kF64Roundoff;
  double accumulate = std::pow(static_cast<double>(k), 1.5) * kF32Roundoff;
  if (dtype == DType::F16) return accumulate + 2 * kF16Roundoff;
  if (dtype == DType::BF16) return accumulate + 2 * kBf16Roundoff;
  return accumulate;
}

// Normwise, for a convolution by cuDNN: each output is a dot product of k = in_channels / groups
// * kh * kw terms, as a GEMM's; f16 and bf16 round the bias to the output type before the
// convolution accumulates onto it (runtime/cuda/cuda_cudnn_conv.h): one more rounding.
inline double cudnnConvTolerance(DType dtype, int64_t k) {
  if (dtype == DType::F16) return gemmTolerance(dtype, k) + 2 * kF16Roundoff;
  if (dtype == DType::BF16) return gemmTolerance(dtype, k) + 2 * kBf16Roundoff;
  return gemmTolerance(dtype, k);
}

// GXC_ALLOW_TF32=1: each input is rounded to TF32 first, so each product is off by up to 2·2^-11
// relatively, and the sum of k of them by 2^-10·Σ|a_i b_i|: as above, about sqrt(k)·2^-10
// normwise, on top of the f32 accumulation.
inline double tf32GemmTolerance(int64_t k) {
  return std::sqrt(static_cast<double>(k)) * 2 * kTf32Roundoff + gemmTolerance(DType::F32, k);
}

// Normwise, for a whole graph run on GPUs: relative errors of a chain of steps add, to first
// order, so each GEMM step on a GPU adds its bound and each generated kernel its own (relu and
// gelu(tanh) epilogues change an error by at most 1.13x: the 0.2 of slack covers them).
inline double graphTolerance(const Graph& graph) {
  double total = 0;
  KernelSteps steps(graph);
  for (const KernelStep& step : steps.steps()) {
    const Op& first = *step.first();
    if (!first.device().isCuda()) continue;
    if (step.kind == StepKind::Gemm) {
      const TensorType& a = first.operands[0]->type;
      bool transposed = first.attrs.getBool("transpose_a", false);
      int64_t k = transposed ? a.shape[a.rank() - 2] : a.shape.back();
      total += 1.2 * gemmTolerance(first.result->type.dtype, k);
    } else if (step.kind == StepKind::Conv) {  // cuDNN's bound covers the generated kernel's
      const Shape& w = first.operands[1]->type.shape;
      int64_t groups = first.attrs.getInt("groups", 1);
      int64_t perGroup = first.kind == OpKind::Conv2d ? w[1] : w[0] / groups;
      total += std::max(generatedKernelTolerance(first.result->type.dtype),
                        1.2 * cudnnConvTolerance(first.result->type.dtype, perGroup * w[2] * w[3]));
    } else if (step.kind == StepKind::Generated) {
      total += generatedKernelTolerance(step.root()->result->type.dtype);
    }
  }
  return total;
}

}  // namespace gxc::gputol
