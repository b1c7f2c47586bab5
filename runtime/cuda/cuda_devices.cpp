// Device enumeration on the cuda platform (see runtime/cuda/gpu_devices.h).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/cuda/gpu_devices.h"

namespace gxc {

GpuEnumeration enumerateCudaGpus() {
  GpuEnumeration result;
  int count = 0;
  // The first call loads libcuda.so: without a driver it fails (cudaErrorInsufficientDriver),
  // without a GPU too (cudaErrorNoDevice). Either way this machine has no GPU for gxc.
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    result.whyNone = fmt::format("CUDA: {}", cudaGetErrorString(status));
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
