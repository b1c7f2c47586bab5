// Executes a scheduled graph on the `sim` platform: N virtual GPUs on the host.
//
// What it does: issues the ops in program order onto their streams (one host thread each),
// with the events the schedule names, the way a CUDA runtime would: asynchronously, the
// streams running concurrently. The arithmetic is real (the graph's generated kernels and
// host GEMMs, runtime/host/host_generated_kernels.h, built when the executor is made; copies
// really copy, host<->device ones through pinned staging buffers), so the results can be
// checked against the host. A fused kernel runs at its root; its other members compute and
// allocate nothing, and take no time (they only make the stream wait for their events). Time
// is simulated: every stream has a clock; an op starts when its stream is free and the events
// it waits for have completed, and lasts what the H100 cost model says; a fused kernel is
// priced, and drawn in the trace, as one kernel (simStepSeconds: one launch, its external
// inputs and its result as traffic); a host<->device copy as the staging pipeline of the
// cuda platform (simStagedCopySeconds: the host side of every tensor is pageable); ops on the
// host by the cost table's host figures. The clock is computed in issue order on the
// calling thread, so it is deterministic whatever the threads do.
//
// Memory is the plan's (passes/plan_memory.h, runtime/memory_plan.h): each device's activations
// live at their planned offsets in one arena, reserved once per executor, at the first run,
// from that GPU's caching allocator as a segment of exactly the plan's bytes (so reserved for
// activations is the plan's peak), with its data in a host block of that size (so a wrong
// offset corrupts results, as on a GPU). Stream tasks read and write those bytes directly:
// nothing but the schedule's events (assign-streams orders every reuse of an arena's bytes
// after the last access of its previous tenant) keeps a stream from overwriting what another
// still reads. Params are allocated from the caching allocator and uploaded once, at the first
// run; inputs are allocated when a run starts (from the host's allocator, or uploaded to
// their GPU) and freed when it ends; outputs are copied out of the host's arena at its end.
//
// Requires: a graph after plan-memory and assign-streams (see runtime/memory_plan.h and
// runtime/schedule.h for the contracts) whose cuda:i devices are all in the config's device
// list.
// Guarantees: outputs equal the reference interpreter's on the same graph. A failed run
// (out of memory, an error in a kernel) leaves no stream running and no input allocated
// (params and arenas stay reserved) and throws a gxc runtime error (exit 3) naming the layer
// (or the arena) and device; the executor can run again.
#pragma once

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_cache.h"
#include "ir/graph.h"
#include "runtime/caching_allocator.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/host_arena.h"
#include "runtime/memory_plan.h"
#include "runtime/param_init.h"
#include "runtime/schedule.h"
#include "runtime/sim/sim_staging.h"
#include "runtime/sim/sim_stream.h"
#include "runtime/trace.h"
#include "target/cost_model.h"
#include "tensor/tensor.h"

namespace gxc {

struct SimConfig {
  int gpus = 1;                              // virtual GPUs on the host (--sim-gpus N)
  int64_t memoryPerGpu = int64_t{80} << 30;  // bytes (--sim-gpus N:MEM)
  // cuda:i runs on virtual GPU deviceMap[i] (--devices 1,0 gives {1, 0}); empty means
  // cuda:i is GPU i for every GPU.
  std::vector<int> deviceMap;
  // GXC_LAUNCH_BLOCKING=1: every op completes before the next is issued, so an error is
  // reported at the layer that caused it, not at the next synchronization.
  bool launchBlocking = false;
  // Each of the two pinned staging buffers per GPU and direction (sim_staging.h).
  int64_t stagingChunkBytes = SimStagingBuffers::kDefaultChunkBytes;
  CostTable costs = h100SxmCosts();
  // --emulate-gpu-blocks: the generated kernels run every GPU thread of their blocks.
  HostLaunchMode launch;
};

struct SimDeviceReport {
  std::string device;   // as the run names it: "cpu", "cuda:0"
  int virtualGpu = -1;  // the GPU behind cuda:i; -1 for the host
  // Simulated time during which at least one of its streams ran an op or a copy: the union
  // of their spans, so streams that overlap count once (busyMs <= finishMs <= totalMs).
  double busyMs = 0;
  double finishMs = 0;        // simulated time its last op ended
  int64_t kernels = 0;        // ops other than copies
  MemoryStats memory;         // peaks are this run's (they are reset when a run starts)
  int64_t uploadedBytes = 0;  // params and inputs placed here before the run (the load)
  int64_t bytesCopiedIn = 0;
  int64_t bytesCopiedOut = 0;
  int64_t copiesIn = 0;
  int64_t copiesOut = 0;
};

struct SimRunReport {
  std::vector<SimDeviceReport> devices;  // cpu, then cuda:0, cuda:1, ...
  double totalMs = 0;                    // simulated time from the first op to the last
  ChromeTrace trace;                     // times are simulated, in microseconds
};

class SimExecutor {
 public:
  SimExecutor(const Graph& scheduled, SimConfig config);
  SimExecutor(const SimExecutor&) = delete;
  SimExecutor& operator=(const SimExecutor&) = delete;
  ~SimExecutor();

  // `inputs` holds one tensor per graph input, by name, of its declared type. Returns the
  // outputs by their model names.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs,
                                    SimRunReport* report = nullptr);

  // torch.cuda.empty_cache() on every GPU (and the host's accounting), between runs.
  void releaseCached();
  // The allocator statistics of a device of the run ("cpu" or cuda:i), as they are now.
  MemoryStats memoryStats(const Device& device) const;
  int64_t pinnedAllocations() const { return staging_.pinnedAllocations(); }
  const Schedule& schedule() const { return schedule_; }
  // The kernel cache's counts of the build of the generated kernels.
  KernelCacheStats kernelCacheStats() const { return generated_->cacheStats(); }
  // The params by name, as they are now (runtime/param_init.h, paramValuesByName), and
  // overwriting them: what training saves and restores, and hands to the executor of its
  // last, smaller batch.
  std::map<std::string, Tensor> paramValues();
  void setParamValues(const std::map<std::string, Tensor>& values);

 private:
  struct RunState;
  // A device's arena: its data on the host, its bytes reserved from the device's allocator.
  struct Arena {
    HostArena data;
    CachingAllocator* allocator = nullptr;
    CachingAllocator::Block block;
  };

  void uploadParams();
  void reserveArenas();
  Tensor upload(const Tensor& host, const Device& device);
  CachingAllocator& allocatorFor(const Device& device) const;
  int virtualGpu(const Device& device) const;
  void placeInputs(RunState& state, const std::map<std::string, Tensor>& inputs);
  // Where a value's bytes are in this run: its arena, its param, its input.
  ConstTensorView viewOf(const RunState& state, const Value* value) const;
  TensorView resultOf(const Value* value) const;
  double simulatedSeconds(const KernelStep& step) const;
  void issue(RunState& state, size_t index);
  void enqueue(RunState& state, size_t index);
  void freeInputs(RunState& state);
  // Drains every stream; sets `failure` to the first kernel error unless it is set already.
  void synchronizeAll(std::exception_ptr& failure);
  // The error a failed op's exception becomes: attributed to its layer and device when it
  // is reported where it happened (launch blocking), to its stream otherwise.
  std::exception_ptr describeFailure(size_t opIndex, std::exception_ptr original,
                                     bool whereItHappened) const;

  const Graph& graph_;
  SimConfig config_;
  Schedule schedule_;
  MemoryPlan plan_;
  SimStagingBuffers staging_;
  std::unique_ptr<CachingAllocator> hostAllocator_;
  // By the run's index (cuda:i), each with its virtual GPU's capacity: the device map is
  // one to one, so a GPU's memory is never shared by two cuda:i.
  std::vector<std::unique_ptr<CachingAllocator>> gpuAllocators_;
  WeightFiles weightFiles_;
  std::map<const Value*, Tensor> params_;  // each in its device's memory (host data on sim)
  std::vector<std::pair<CachingAllocator*, CachingAllocator::Block>> paramBlocks_;
  std::map<std::string, int64_t> paramUploadBytes_;  // by device name
  bool paramsReady_ = false;
  std::vector<Arena> arenas_;  // cpu, then cuda:0, cuda:1, ...; reserved at the first run
  bool arenasReady_ = false;
  std::map<int64_t, std::unique_ptr<SimEvent>> events_;
  std::unique_ptr<HostGeneratedKernels> generated_;
  // Last: destroyed first, so no task outlives the events, buffers and staging it uses.
  std::vector<std::unique_ptr<SimStream>> streams_;
};

}  // namespace gxc
