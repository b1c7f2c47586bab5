// Executes a scheduled graph on the `cuda` platform: real GPUs through the CUDA runtime.
//
// What it does: the sim executor's plan on real devices. Ops are issued in program order
// onto the schedule's streams (one CUDA stream per scheduled GPU stream), waiting for and
// recording the schedule's events (cudaStreamWaitEvent, cudaEventRecord); ops of the host
// stream run on the calling thread once the events they wait for have completed. GEMMs go to
// cuBLASLt (runtime/cuda_gemm.h), every other GPU op to its generated kernel (the graph's
// PTX, runtime/cuda_kernels.h); host<->device copies go through each copy stream's pinned
// staging buffer (runtime/cuda_staging.h); device<->device copies use cudaMemcpyPeerAsync
// where the two GPUs can access each other's memory (peer access is enabled at start),
// else the pinned buffer. Each GPU's memory comes from a caching allocator over cudaMalloc
// with PyTorch's statistics (runtime/cuda_allocator.h).
//
// Freeing: a value's block is freed after its last reader in program order, as on sim, but
// a GPU may still be reading it; so the block goes back to the allocator only once an
// event recorded on every stream that used it has completed (PyTorch's record_stream).
//
// Requires: a graph after assign-streams (runtime/schedule.h) whose cuda:i are all in the
// config's device map, every GPU op a copy, a GEMM, or an op with a kernel in the program.
// Guarantees: outputs equal the reference interpreter's within float tolerance. A failed run
// drains every stream, frees its activations (params stay resident) and throws a runtime
// error (exit 3); GXC_LAUNCH_BLOCKING=1 attributes a GPU failure to its layer. An op that
// no part of this build can run on a GPU is refused when the executor is made (exit 2).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/caching_allocator.h"
#include "runtime/cuda_kernels.h"
#include "runtime/cuda_platform.h"
#include "runtime/cuda_staging.h"
#include "runtime/param_init.h"
#include "runtime/schedule.h"
#include "runtime/tensor.h"

namespace gxc {

struct CudaConfig {
  std::vector<int> deviceMap;   // cuda:i runs on CUDA device deviceMap[i] (--devices)
  bool launchBlocking = false;  // GXC_LAUNCH_BLOCKING=1
  bool allowTf32 = false;       // GXC_ALLOW_TF32=1
  int64_t stagingBytes = CudaStagingBuffer::kDefaultBytes;
  CudaProgram program;  // the graph's generated kernels
};

class CudaExecutor {
 public:
  CudaExecutor(const Graph& scheduled, CudaConfig config);
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;
  ~CudaExecutor();

  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs,
                                    CudaRunReport* report = nullptr);

  void releaseCached();  // torch.cuda.empty_cache() on every GPU
  MemoryStats memoryStats(const Device& device) const;
  int64_t pinnedAllocations() const;
  // Whether copies from GPU `from` to GPU `to` (CUDA numbering) go peer to peer.
  bool peerToPeer(int from, int to) const { return peers_.count({from, to}) > 0; }

 private:
  struct Gpu;
  struct Live;
  struct RunState;

  void checkRunnable() const;
  void uploadParams();
  void placeInput(RunState& state, const Value* input, const std::map<std::string, Tensor>& inputs);
  const Live& liveOf(const RunState& state, const Value* value) const;
  void allocateResult(RunState& state, const Op& op);
  void issue(RunState& state, size_t index);
  void execute(RunState& state, size_t index, Live& result);
  void copy(RunState& state, size_t index, Live& result);
  void freeIfDead(RunState& state, const Value* value, size_t index);
  void reapFrees(RunState& state, bool wait);
  void finish(RunState& state);

  const Graph& graph_;
  CudaConfig config_;
  Schedule schedule_;
  std::vector<std::unique_ptr<Gpu>> gpus_;           // by cuda:i
  std::unique_ptr<CachingAllocator> hostAllocator_;  // accounting only, for the report
  std::set<std::pair<int, int>> peers_;
  std::unique_ptr<CudaKernelLibrary> kernels_;
  WeightFiles weightFiles_;
  std::map<const Value*, std::unique_ptr<Live>> params_;
  bool paramsReady_ = false;
  std::vector<std::unique_ptr<CudaStream>> streams_;         // null for the host's stream
  std::vector<std::unique_ptr<CudaStagingBuffer>> staging_;  // per stream; copy streams only
  std::map<int64_t, std::unique_ptr<CudaEvent>> events_;     // null where the host records
};

}  // namespace gxc
