#include "runtime/cuda/gpu_devices.h"

#include "ir/diagnostic.h"
#include "runtime/cuda/cuda_platform.h"

namespace gxc {

#ifdef GXC_HAVE_CUDA
GpuEnumeration enumerateCudaGpus();          // runtime/cuda/cuda_devices.cpp
int64_t measureUsableCudaMemory(int index);  // runtime/cuda/cuda_devices.cpp
#endif

bool builtWithCuda() {
#ifdef GXC_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

const GpuEnumeration& enumerateGpus() {
#ifdef GXC_HAVE_CUDA
  static const GpuEnumeration enumeration = enumerateCudaGpus();
#else
  static const GpuEnumeration enumeration = {{}, "gxc was built without CUDA"};
#endif
  return enumeration;
}

int64_t usableGpuMemory(int index) {
#ifdef GXC_HAVE_CUDA
  return measureUsableCudaMemory(index);
#else
  GXC_CHECK(false, "GPU {}'s memory was asked for in a build without CUDA", index);
  return 0;
#endif
}

void checkArchRunsOnGpus(const GpuArch& arch, const std::vector<GpuDeviceInfo>& gpus) {
  for (const GpuDeviceInfo& gpu : gpus)
    if (!archRunsOn(arch, gpu.computeCapability()))
      usageError(
          "--arch {}: GPU {} ({}) has compute capability {}.{}, which cannot run code built for "
          "{}; leave --arch out to build for the run's oldest GPU",
          arch.str(), gpu.index, gpu.name, gpu.major, gpu.minor, arch.str());
}

#ifndef GXC_HAVE_CUDA
// The cuda platform's entry point where there is none: the driver refuses GPU device lists
// in such a build, so reaching this is a gxc bug.
CudaPlatformRun runOnCudaPlatform(const Graph&, const std::map<std::string, Tensor>&,
                                  const CudaRunOptions&) {
  GXC_CHECK(false, "the cuda platform was asked to run in a build without CUDA");
  return {};
}

struct CudaSession::Impl {};

CudaSession::CudaSession(const Graph&, const CudaRunOptions&) {
  GXC_CHECK(false, "the cuda platform was asked to run in a build without CUDA");
}

CudaSession::~CudaSession() = default;

std::map<std::string, Tensor> CudaSession::run(const std::map<std::string, Tensor>&,
                                               CudaRunReport*) {
  return {};
}

std::map<std::string, Tensor> CudaSession::paramValues() { return {}; }

void CudaSession::setParamValues(const std::map<std::string, Tensor>&) {}

KernelCacheStats CudaSession::kernelCache() const { return {}; }
#endif

}  // namespace gxc
