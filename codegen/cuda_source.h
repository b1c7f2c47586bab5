// CUDA C++ source of a placed (and possibly fused) graph's kernels: the text that NVRTC
// compiles for GPUs and the host C++ compiler compiles for `cpu` and `sim` (see gxc_kernel.h).
//
// What it does: every step of the graph (ir/kernel_steps.h) that is not a GEMM, a copy,
// a param or a view gets one generated kernel: a lone op (every elementwise op, softmax,
// log_softmax, layer_norm, rms_norm, group_norm, the reductions, transpose, concat, slice off
// axis 0, embedding, the losses) or a whole fused kernel (elementwise ops; one anchor with the
// elementwise prologue that computes its input and the tail that reads its result). A GEMM
// with a fused epilogue (bias, relu, gelu) gets its epilogue as a generated elementwise
// kernel, which the host applies after its BLAS GEMM (GPUs let cuBLASLt apply it instead). A
// convolution with a fused epilogue (batch_norm, relu, residual adds) gets two: the
// convolution alone (its ops just the convolution) and its epilogue, which run where oneDNN's
// post-ops do not (cuDNN's result, f64, emulated GPU blocks).
// Requires: a verified graph with every value typed.
// Guarantees: one translation unit beginning with #include "gxc_kernel.h" and including
// nothing else; shapes, strides and constants baked into each kernel; identical kernels (data
// parallel replicas, say) written once under one name, a hash of their text, so the name of a
// kernel changes exactly when its text does. The same graph gives the same text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/fused_kernel.h"
#include "ir/graph.h"

namespace gxc {

struct LaunchShape {
  int64_t grid = 1;   // blocks
  int64_t block = 1;  // threads per block
};

struct CudaKernel {
  std::string name;                  // the extern "C" __global__ function
  std::vector<const Op*> ops;        // what it computes, in program order; the root last
  const Value* output = nullptr;     // args.p[0]
  std::vector<const Value*> inputs;  // args.p[1], p[2], ...
  // A GEMM's or convolution's epilogue: ops.front() is the GEMM or convolution (not computed
  // by this kernel) and inputs[0] its result, which the executor computes first.
  bool epilogue = false;
  LaunchShape gpu;   // grid-stride loops: any grid works; this one covers the work once
  LaunchShape host;  // blockDim is 1 on the host (gxc_host_launch)
};

struct CudaSource {
  std::string text;                 // the translation unit
  std::vector<CudaKernel> kernels;  // one per step, in program order (names may repeat)
};

CudaSource generateCudaSource(const Graph& graph);

// How many distinct kernels a translation unit generateCudaSource wrote defines (for
// progress: "compiling 12 kernels").
int definedKernelCount(std::string_view text);

// gxc_kernel.h, as embedded in the library: the header NVRTC and the host compiler get.
std::string_view kernelHeaderText();

}  // namespace gxc
