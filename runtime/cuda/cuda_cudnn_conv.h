// Convolutions on the cuda platform through cuDNN: conv2d as cuDNN's forward convolution and
// conv_transpose2d as its backward-data convolution (runtime/cuda/cudnn_conv_geometry.h says
// how each is posed), on the op's stream. The generated conv kernel stays the oracle, and runs
// what cuDNN does not take (an asymmetric padding, ...: the geometry's generatedBecause).
//
// API: cuDNN 9's graph (backend) API: operation graph, engine heuristics, execution plan,
// variant pack. The legacy calls (cudnnConvolutionForward, cudnnConvolutionBackwardData,
// cudnnFindConvolution*) are marked CUDNN_DEPRECATED in cuDNN 9's cudnn_cnn.h, and the graph
// API is what they are built on now.
//
// Precision: computed in f32 (cuDNN's compute type) for every dtype. For f32 operands the
// engines cuDNN marks as tensor-core (TF32) or down-converting are left out unless
// GXC_ALLOW_TF32=1, as for GEMMs; engines marked as reducing in reduced precision (f16
// accumulation) are always left out. The bias is not a fused cuDNN add: the result is first
// filled with each channel's bias (cudaMemcpy2DAsync, no kernel) and the convolution
// accumulates onto it (beta = 1). For f16 and bf16 that rounds the bias to the output type
// before the sum is rounded again: one more rounding than the reference's.
//
// Plans: the descriptors, the engine chosen and its execution plan are made once per
// convolution shape, dtype and operand alignment, on first use, and reused by every later
// call of that kind. Workspace: one block per stream from the GPU's caching allocator, grown
// (after the stream is drained) when a plan needs more.
//
// No engine: where cuDNN's heuristics offer no engine that finalizes for a convolution (an
// unusual geometry on an old GPU), run() answers false and the caller launches the generated
// kernel; that is counted, not an error.
//
// Requires: a CUDA device; the operands and result contiguous on it.
// Guarantees: asynchronous on the stream; a cuDNN failure is a runtime error (exit 3) naming
// the layer. Run on one H200 (scripts/gpu-check.sh): every conv fixture cuDNN takes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "ir/graph.h"
#include "runtime/caching_allocator.h"
#include "runtime/cuda/cudnn_conv_geometry.h"

namespace gxc {

struct CudnnConv {
  std::string layer;  // for messages
  CudnnConvGeometry geometry;
};

// One per GPU: a cuDNN handle, the plans it has made, and the streams' workspaces.
class CudnnConvRunner {
 public:
  struct Stats {
    int64_t plans = 0;     // kinds of convolution planned (heuristics asked)
    int64_t calls = 0;     // convolutions cuDNN ran
    int64_t noEngine = 0;  // calls left to the generated kernel: cuDNN had no engine
  };

  // Only in builds with cuDNN (builtWithCudnn()).
  CudnnConvRunner(int cudaDevice, CachingAllocator& allocator, bool allowTf32);
  ~CudnnConvRunner();
  CudnnConvRunner(const CudnnConvRunner&) = delete;
  CudnnConvRunner& operator=(const CudnnConvRunner&) = delete;

  // conv.geometry.viaCudnn() must hold. x, w, bias (null without one) and out as the op's
  // operands and result. False: cuDNN has no engine for it, and nothing was written.
  bool run(const CudnnConv& conv, const void* x, const void* w, const void* bias, void* out,
           cudaStream_t stream);

  const Stats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gxc
