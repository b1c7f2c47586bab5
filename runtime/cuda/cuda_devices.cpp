// Device enumeration on the cuda platform (see runtime/cuda/gpu_devices.h).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_gemm.h"
#include "runtime/cuda/gpu_devices.h"
#include "target/byte_size.h"

namespace gxc {

int64_t measureUsableCudaMemory(int index) {
  CudaDeviceGuard guard(index);
  // The runtime creates a GPU's (primary) context lazily: make it exist before measuring, so
  // that what it takes is not counted as free.
  checkCuda(cudaFree(nullptr), fmt::format("creating GPU {}'s CUDA context", index));
  size_t free = 0, total = 0;
  checkCuda(cudaMemGetInfo(&free, &total), fmt::format("GPU {}'s free memory", index));
  int64_t usable = static_cast<int64_t>(free) - kCublasLtWorkspaceBytes;
  if (usable <= 0)
    runtimeError({},
                 "GPU {}: only {} of its {} is free once gxc's CUDA context exists, and its "
                 "cuBLASLt workspace alone needs {}; other processes hold the rest",
                 index, formatBytes(static_cast<int64_t>(free)),
                 formatBytes(static_cast<int64_t>(total)), formatBytes(kCublasLtWorkspaceBytes));
  return usable;
}

// CUDA's reason, in the user's words: "CUDA driver version is insufficient for CUDA runtime
// version" is what the runtime says where there is no driver at all (a machine without GPU),
// and cudaDriverGetVersion gives 0 only then.
std::string whyCudaFindsNoGpu(cudaError_t status) {
  if (status == cudaErrorNoDevice) return "the GPU driver finds no GPU";
  if (status != cudaErrorInsufficientDriver)
    return fmt::format("CUDA: {}", cudaGetErrorString(status));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (driver == 0) return "no GPU driver is installed";
  return fmt::format("the GPU driver supports CUDA {}.{}, older than this gxc's CUDA {}.{}",
                     driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
}

GpuEnumeration enumerateCudaGpus() {
  GpuEnumeration result;
  int count = 0;
  // The first call loads libcuda.so: without a driver it fails (cudaErrorInsufficientDriver),
  // without a GPU too (cudaErrorNoDevice). Either way this machine has no GPU for gxc.
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    result.whyNone = whyCudaFindsNoGpu(status);
    cudaGetLastError();  // not sticky: clear it so that it does not surface at a later call
    return result;
  }
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    status = cudaGetDeviceProperties(&properties, index);
    if (status != cudaSuccess) {
      result.gpus.clear();
      result.whyNone = fmt::format("CUDA: GPU {}: {}", index, cudaGetErrorString(status));
      cudaGetLastError();
      return result;
    }
    result.gpus.push_back({index, properties.name, static_cast<int64_t>(properties.totalGlobalMem),
                           properties.major, properties.minor});
  }
  if (result.gpus.empty()) result.whyNone = "CUDA found no device";
  return result;
}

}  // namespace gxc
