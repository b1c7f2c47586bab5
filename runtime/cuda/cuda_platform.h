// The cuda platform as the driver sees it, in every build: what a run on real GPUs takes and
// gives back, with no CUDA type in sight (runtime/cuda/cuda_executor.h has those).
//
// Only a build with CUDA runs it (runtime/cuda/cuda_platform.cpp); elsewhere the driver never
// asks, since it refuses GPU device lists first (see runtime/cuda/gpu_devices.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/gpu_arch.h"
#include "codegen/kernel_cache.h"
#include "ir/graph.h"
#include "runtime/caching_allocator.h"
#include "tensor/tensor.h"

namespace gxc {

struct CudaDeviceReport {
  std::string device;  // "cpu", "cuda:0"
  int gpu = -1;        // the CUDA device behind cuda:i; -1 for the host
  // GPUs: from the run's start on the device to its last stream's end (CUDA events);
  // the host: the wall time of the run.
  double ms = 0;
  MemoryStats memory;
  int64_t bytesCopiedIn = 0, bytesCopiedOut = 0, copiesIn = 0, copiesOut = 0;
};

struct CudaRunReport {
  std::vector<CudaDeviceReport> devices;  // cpu, then cuda:0, cuda:1, ...
  double totalMs = 0;                     // wall time of the run
};

struct CudaRunOptions {
  std::vector<int> deviceMap;  // cuda:i is CUDA device deviceMap[i]
  // What cuda:i's caching allocator may reserve: the Target's memory, which plan-memory
  // checked the plan against (usableGpuMemory); empty: measured when the run starts.
  std::vector<int64_t> memoryBytes;
  std::optional<GpuArch> arch;  // --arch; default: the oldest of the run's GPUs' own
  int iterations = 0;           // after one run (the warm-up), this many timed runs
  std::function<void(const std::string&)> note;  // a line for the user (the driver's notes)
};

struct CudaPlatformRun {
  std::map<std::string, Tensor> outputs;
  CudaRunReport report;  // of the last run
  std::vector<double> iterationMs;
  KernelCacheStats kernelCache;  // the generated kernels' PTX: compiled or from the cache
};

// Runs a scheduled graph on real GPUs, with GXC_LAUNCH_BLOCKING and GXC_ALLOW_TF32 from the
// environment.
CudaPlatformRun runOnCudaPlatform(const Graph& scheduled,
                                  const std::map<std::string, Tensor>& inputs,
                                  const CudaRunOptions& options);

// A scheduled graph held on real GPUs for many runs, its params staying on the GPUs between
// them: the steps of `gxc train` (tools/driver/train_step.h), which update the params in place
// and read or write them by name between runs (a resume, the last batch's own step).
// `options.iterations` is not used.
class CudaSession {
 public:
  CudaSession(const Graph& scheduled, const CudaRunOptions& options);
  ~CudaSession();
  CudaSession(const CudaSession&) = delete;
  CudaSession& operator=(const CudaSession&) = delete;

  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs,
                                    CudaRunReport* report = nullptr);
  std::map<std::string, Tensor> paramValues();
  void setParamValues(const std::map<std::string, Tensor>& values);
  KernelCacheStats kernelCache() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gxc
