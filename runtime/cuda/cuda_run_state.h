// The cuda executor's private state, shared by its two source files: cuda_executor.cpp (set
// up, params, runs, reports) and cuda_executor_ops.cpp (issuing each op).
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <vector>

#include "runtime/cuda/cuda_cudnn_conv.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/cuda/cuda_stream.h"

namespace gxc {

// One GPU of the run (cuda:i): its CUDA device, memory, cuBLASLt, cuDNN (null in a build
// without it), and the timing events that bracket a run on it.
struct CudaExecutor::Gpu {
  int cudaDevice;
  std::unique_ptr<CachingAllocator> allocator;
  CachingAllocator::Block arena;  // the activations' arena (allocateArena), from the first run
  std::unique_ptr<CudaGemmRunner> gemm;
  std::unique_ptr<CudnnConvRunner> conv;  // after the allocator: its workspaces go back to it
  std::unique_ptr<CudaEvent> runStart;
};

// A value's data: a host tensor, or a GPU pointer (a block of its own, or bytes of an arena,
// a param or an input, with no allocator); and the streams that have used it, which a free
// must wait for.
struct CudaExecutor::Live {
  std::shared_ptr<Tensor> host;
  void* device = nullptr;
  CachingAllocator* allocator = nullptr;
  CachingAllocator::Block block;
  std::set<size_t> streams;  // Schedule::streams indices of GPU streams that touched it
};

struct CudaExecutor::RunState {
  struct PendingFree {
    CachingAllocator* allocator;
    CachingAllocator::Block block;
    std::vector<std::unique_ptr<CudaEvent>> uses;  // one per stream that used the block
  };

  std::map<const Value*, Live> live;  // values of this run whose memory is held, params aside
  std::vector<PendingFree> pendingFrees;
  std::set<int64_t> hostRecorded;         // events recorded by host ops: complete when recorded
  std::vector<CudaDeviceReport> devices;  // cpu, cuda:0, ...
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  CudaDeviceReport& report(const Device& device) {
    return devices.at(device.isCpu() ? 0 : static_cast<size_t>(device.index) + 1);
  }
};

}  // namespace gxc
