// Executes a scheduled graph on the `cuda` platform: real GPUs through the CUDA runtime.
//
// What it does: the sim executor's plan on real devices, step by step as the sim executes it
// (ir/kernel_steps.h). Ops are issued in program order onto the schedule's streams (one
// CUDA stream per scheduled GPU stream), waiting for and recording the schedule's events
// (cudaStreamWaitEvent, cudaEventRecord); ops of the host stream run on the calling thread
// once the events they wait for have completed. On a GPU, a step runs as its kind says:
//   - Generated: the step's generated kernel (codegen's translation unit for the graph,
//     compiled by NVRTC for the run's architecture through the kernel cache, loaded once:
//     runtime/cuda/cuda_kernels.h), launched with GxcArgs {result, inputs...};
//   - Gemm: one cuBLASLt call (runtime/cuda/cuda_gemm.h) with the fused kernel's bias and
//     activation as cuBLASLt's epilogue, not as a separate kernel; where cuBLASLt has no
//     algorithm with that epilogue, the plain GEMM and then the step's generated epilogue
//     kernel, in place on the result;
//   - Conv (conv2d, conv_transpose2d): one cuDNN call (runtime/cuda/cuda_cudnn_conv.h), after
//     the bias is copied into the result; the step's generated kernel where cuDNN does not take
//     the convolution (an asymmetric padding: runtime/cuda/cudnn_conv_geometry.h, said in a
//     note when the executor is made) or has no engine for it, and in builds without cuDNN;
//     a fused convolution's epilogue (batch_norm, relu, residual adds) then runs as the step's
//     generated epilogue kernel, in place on the result;
//   - Copy: host<->device through each copy stream's double-buffered pinned staging, its
//     host memcpys on the stream's own staging thread (runtime/cuda/cuda_staging.h);
//     device<->device by cudaMemcpyPeerAsync where the two GPUs can access each other's
//     memory (peer access is enabled at start), else the pinned buffer, also where enabling
//     it failed (with a note saying so, once per pair);
//   - View (reshape, slice along axis 0): no memory and no work, a pointer into its base;
//   - an internal member of a fused kernel: nothing (its root computes it), but its events.
// Each GPU's memory comes from a caching allocator over cudaMalloc with PyTorch's statistics
// (runtime/cuda/cuda_allocator.h). Its activations live where plan-memory put them
// (runtime/memory_plan.h): at their offsets in one arena per GPU, a segment of exactly the
// plan's bytes reserved from that allocator at the first run and kept for every later run;
// a view is a pointer into the bytes it sees. The schedule's events order every reuse of an
// arena's bytes after their last reader (assign-streams), which the executor checks when it is
// made (checkArenaReuseOrdered). Params and GPU inputs are blocks of the caching allocator;
// values on the host (inputs, host ops, copies to the host) are host tensors, accounted by the
// host's allocator. It has run on one GPU (scripts/gpu-check.sh), never on several.
//
// Indices that are data (embedding indices, cross_entropy targets) are checked on the host
// with the reference interpreter's messages, never left to produce garbage or fault on the
// GPU (runtime/cuda/gpu_index_checks.h): in the input when the run starts, or in the host op's
// result that is scattered to the GPUs (data-parallel shards, pipeline micro-batches) as soon
// as the host has computed it; only where a GPU computed them is the step's stream drained and
// the (small, integer) tensor copied back before the kernel is launched.
//
// Freeing (host values and GPU inputs; arenas are not freed during a run): a value's block is
// freed after its last reader in program order (a fused kernel reads its inputs when its root
// runs; a view's base lives as long as the view), but a GPU may still be reading it; so the
// block goes back to the allocator only once an event recorded on every stream that used it
// has completed (PyTorch's record_stream).
//
// Requires: a graph after plan-memory and assign-streams (runtime/memory_plan.h,
// runtime/schedule.h) whose cuda:i are all in the config's device map.
// Guarantees: outputs equal the reference interpreter's within float tolerance. A failed run
// drains every stream, frees its inputs and host values (params and arenas stay reserved)
// and throws a runtime error (exit 3); GXC_LAUNCH_BLOCKING=1 attributes a GPU failure to its
// layer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel_cache.h"
#include "ir/graph.h"
#include "ir/kernel_steps.h"
#include "runtime/caching_allocator.h"
#include "runtime/cuda/cuda_cudnn_conv.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/cuda/cuda_kernels.h"
#include "runtime/cuda/cuda_platform.h"
#include "runtime/cuda/cuda_staging.h"
#include "runtime/cuda/gpu_index_checks.h"
#include "runtime/memory_plan.h"
#include "runtime/param_init.h"
#include "runtime/schedule.h"
#include "tensor/tensor.h"

namespace gxc {

// Peer access from GPU `to` to GPU `from`'s memory, once cudaDeviceEnablePeerAccess has
// answered `status`: nullopt where copies from `from` to `to` may go peer to peer (enabled now,
// or already), else the note that says they go through host memory instead, and why.
std::optional<std::string> peerAccessRefused(int from, int to, cudaError_t status);

// GXC_LAUNCH_BLOCKING=1: runs `work` (an op's GPU work and the wait for it) so that what CUDA
// or cuBLAS reports (CudaCallError: it names a call or a stream) is reported at `op`'s layer
// and device; gxc's own errors (an index out of range, out of memory) name the layer already.
void attributeToLayer(const Op& op, const std::function<void()>& work);

struct CudaConfig {
  std::vector<int> deviceMap;  // cuda:i runs on CUDA device deviceMap[i] (--devices)
  // cuda:i's allocator capacity: the driver's Target (what plan-memory checked); empty:
  // usableGpuMemory, measured before the executor allocates anything.
  std::vector<int64_t> memoryBytes;
  bool launchBlocking = false;  // GXC_LAUNCH_BLOCKING=1
  bool allowTf32 = false;       // GXC_ALLOW_TF32=1
  // Tests only: as if cuBLASLt had no algorithm with an epilogue (CudaGemmRunner), so that
  // the plain GEMM and the generated epilogue kernel run instead.
  bool pretendNoGemmEpilogueAlgorithm = false;
  int64_t stagingChunkBytes = CudaStagingBuffer::kDefaultChunkBytes;  // each of two per stream
  std::optional<GpuArch> arch;  // of the generated kernels; default: the run's oldest GPU's
  KernelCache cache = KernelCache::fromEnvironment();
  std::function<void(const std::string&)> note;  // one line for the user; empty: dropped
};

class CudaExecutor {
 public:
  CudaExecutor(const Graph& scheduled, CudaConfig config);
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;
  ~CudaExecutor();

  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs,
                                    CudaRunReport* report = nullptr);

  // The params by name, as they are now (runtime/param_init.h, paramValuesByName), read back
  // from the GPUs; and overwritten by name (a resume, another step's values), every replica:
  // only the params given are read back and written (a training step's 0-d lr, before every
  // step, moves 4 bytes each way, not the model).
  std::map<std::string, Tensor> paramValues();
  void setParamValues(const std::map<std::string, Tensor>& values);

  void releaseCached();  // torch.cuda.empty_cache() on every GPU
  MemoryStats memoryStats(const Device& device) const;
  int64_t pinnedAllocations() const;
  int64_t eventsCreated() const { return eventPool_.created(); }  // for frees, in all runs
  const KernelCacheStats& kernelCacheStats() const { return config_.cache.stats(); }
  // cuBLASLt plans made and calls run without their epilogue, on cuda:i.
  const CudaGemmRunner::Stats& gemmStats(int gpu) const;
  // cuDNN's convolution plans and calls on cuda:i; null in a build without cuDNN.
  const CudnnConvRunner::Stats* cudnnConvStats(int gpu) const;
  // Whether copies from GPU `from` to GPU `to` (CUDA numbering) go peer to peer.
  bool peerToPeer(int from, int to) const { return peers_.count({from, to}) > 0; }

 private:
  struct Gpu;
  struct Live;
  struct RunState;

  void checkRunnable() const;
  void planSteps();
  void uploadParams();
  // Every param's values as host tensors; with `only`, those of the params it names.
  std::map<const Value*, Tensor> downloadParams(
      const std::map<std::string, Tensor>* only = nullptr);
  void reserveArenas();
  void checkInputIndices(const std::map<std::string, Tensor>& inputs) const;
  void checkIndicesOnDevice(RunState& state, const KernelStep& step, CudaStream& stream);
  // A generated kernel into `result`, its inputs live in `state`.
  void launchGenerated(RunState& state, const CudaKernelLaunch& launch, Live& result,
                       CudaStream& stream);
  // A fused GEMM's or convolution's epilogue kernel on the result the library wrote.
  void launchEpilogue(RunState& state, const KernelStep& step, Live& result, CudaStream& stream);
  void markUse(RunState& state, const Value* value, size_t stream);
  void placeInput(RunState& state, const Value* input, const std::map<std::string, Tensor>& inputs);
  const Live& liveOf(const RunState& state, const Value* value) const;
  void allocateResult(RunState& state, const Op& op);
  void issue(RunState& state, size_t index);
  void execute(RunState& state, size_t index, Live& result);
  void executeOnHost(RunState& state, const Op& op, Live& result);
  void copy(RunState& state, size_t index, Live& result);
  void freeIfDead(RunState& state, const Value* value, size_t index);
  void reapFrees(RunState& state, bool wait);
  void finish(RunState& state);

  const Graph& graph_;
  CudaConfig config_;
  Schedule schedule_;
  MemoryPlan plan_;
  KernelSteps steps_;
  std::map<const Op*, CudaGemm> gemms_;            // by a GPU Gemm step's root
  std::map<const Op*, CudnnConv> convs_;           // by a GPU Conv step's root
  std::map<const Value*, const Value*> viewBase_;  // a GPU view -> the value owning its bytes
  std::vector<IndexCheck> indexChecks_;            // of every GPU op with data indices
  CudaProgram program_;
  std::vector<std::unique_ptr<Gpu>> gpus_;           // by cuda:i
  std::unique_ptr<CachingAllocator> hostAllocator_;  // accounting only, for the report
  std::set<std::pair<int, int>> peers_;
  std::unique_ptr<CudaKernelLibrary> kernels_;
  WeightFiles weightFiles_;
  std::map<const Value*, std::unique_ptr<Live>> params_;
  bool paramsReady_ = false;
  bool arenasReady_ = false;                                 // every GPU's Gpu::arena reserved
  std::vector<std::unique_ptr<CudaStream>> streams_;         // null for the host's stream
  std::vector<std::unique_ptr<CudaStagingBuffer>> staging_;  // per stream; copy streams only
  std::map<int64_t, std::unique_ptr<CudaEvent>> events_;     // null where the host records
  std::vector<std::unique_ptr<CudaEvent>> streamEnds_;       // per stream, timed; null: host
  CudaEventPool eventPool_;  // for frees: an event per stream that used a freed block
};

}  // namespace gxc
