// The generated kernels of one graph, built for the host and ready to run: what the `cpu`
// and `sim` platforms compute every step with.
//
// At construction the graph's CUDA C++ (codegen/cuda_source.h) is generated and built by the
// host compiler through the on-disk kernel cache (codegen/host_kernel_library.h), once for
// all of the graph's kernels and before anything runs. A step then runs as its kind says,
// writing its result where the caller placed it (the executors' arenas): a generated kernel
// on the host (blocks over the cores, blockDim 1; or, emulating GPU blocks, the GPU's grid with
// every thread of a block run, where what a GPU would not run is a runtime error naming the layer);
// a GEMM through oneDNN (runtime/host/cpu_gemm.h) with a fused epilogue as its post-ops (f32),
// else followed by the generated epilogue kernel, which reads the GEMM's product in the result's
// own bytes (an epilogue is elementwise: each element is read before it is written); a copy as a
// copy; a view as nothing at all, its result being its operand's bytes already; a convolution
// through oneDNN (runtime/host/cpu_conv.h), its result kept channels-last where only convolutions
// and max pools read it (runtime/host/channels_last.h); an f32 max pool through oneDNN
// (runtime/host/cpu_pool.h); an f32 attention large enough to pay for it through
// oneDNN's matmuls and softmax (runtime/host/cpu_attention.h). Internal values of a fused kernel
// are never materialized. Indices that are data (embedding rows, cross_entropy targets) are checked
// before the kernel is launched, with the reference interpreter's messages.
#pragma once

#include <map>
#include <memory>
#include <unordered_set>
#include <vector>

#include "codegen/cuda_source.h"
#include "codegen/host_kernel_library.h"
#include "codegen/kernel_cache.h"
#include "ir/graph.h"
#include "ir/kernel_steps.h"
#include "runtime/host/constant_weights.h"
#include "runtime/host/step_tensors.h"
#include "tensor/tensor.h"

namespace gxc {

// The operand of `op` whose values index another operand (embedding's indices,
// cross_entropy's targets), or null; and the reference interpreter's check of those values,
// with its messages (a runtime error, exit 3). The cuda platform checks them the same way.
const Value* dataIndexOperand(const Op& op);
void checkDataIndices(const Op& op, const ConstTensorView& indices);

// A library call that computes an op from its operands' tensors into its result.
using HostLibraryCall = void (*)(const Op&, const std::vector<ConstTensorView>&, TensorView);

// The call the host runs `op` through, alone in its step, rather than its generated kernel
// (unless GPU blocks are emulated), or null: oneDNN for an f32 attention with the work to pay
// for it, the row ops of isHostLibraryRowOp (target/host_library.h, which the fuse pass
// leaves alone on the host): an f32 layer_norm, softmax or log_softmax, and an f32 max_pool2d.
// The kernels run one row per block, summing in double; the library's are vectorized over the
// row (cpu_attention.h, cpu_layer_norm.h, cpu_softmax.h); the pool reads channels-last bytes
// where they are (cpu_pool.h; `run` gives it its layouts, this call takes NCHW).
HostLibraryCall hostLibraryCallFor(const Op& op);

// How generated kernels run on the host: blockDim 1 (the fast way), or every GPU thread
// emulated (--emulate-gpu-blocks: the GPU's launch configuration, or `block` threads per
// block where it is not 0, for tests of other block sizes).
struct HostLaunchMode {
  bool emulateBlocks = false;
  int64_t block = 0;
};

class HostGeneratedKernels {
 public:
  explicit HostGeneratedKernels(const Graph& graph,
                                KernelCache cache = KernelCache::fromEnvironment(),
                                HostLaunchMode mode = {});

  const KernelSteps& steps() const { return steps_; }
  const CudaSource& source() const { return source_; }
  const KernelCacheStats& cacheStats() const { return cache_.stats(); }
  // Whether `value` lies in channels-last bytes between the convolutions that write and read
  // it (runtime/host/channels_last.h); never when emulating GPU blocks.
  bool channelsLast(const Value* value) const { return channelsLast_.count(value) != 0; }

  // Computes `step` (not a param) from its inputs, given in the order of step.inputs, into
  // `result` (the root's type; for a view, its operand's bytes from viewByteOffset on; else
  // overlapping no input). Safe to call from several threads at once, each with its own
  // `constant` or none: the weights its GEMMs and convolutions may keep packed between calls
  // (constant_weights.h); without it they are packed at every call.
  void run(const KernelStep& step, const std::vector<ConstTensorView>& inputs,
           const TensorView& result, ConstantWeights* constant = nullptr) const;
  // A Conv step, or a generated step `run` hands to a library (hostLibraryCallFor), through its
  // generated kernels instead: the second implementation the tests hold the library to.
  void runGeneratedKernel(const KernelStep& step, const std::vector<ConstTensorView>& inputs,
                          const TensorView& result) const;

 private:
  struct Loaded {
    const CudaKernel* kernel;
    HostKernelLibrary::Kernel function;
    HostLibraryCall libraryCall;  // what `run` calls instead of the kernel, where not null
  };

  void launch(const Loaded& loaded, const TensorView& output, const StepTensors& tensors) const;

  KernelSteps steps_;
  CudaSource source_;
  KernelCache cache_;
  HostLaunchMode mode_;
  std::unordered_set<const Value*> channelsLast_;
  std::unique_ptr<HostKernelLibrary> library_;
  std::map<const Op*, Loaded> byRoot_;
};

}  // namespace gxc
