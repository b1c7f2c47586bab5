#include "runtime/cuda/gpu_devices.h"

#include "ir/diagnostic.h"
#include "runtime/cuda/cuda_platform.h"

namespace gxc {

#ifdef GXC_HAVE_CUDA
GpuEnumeration enumerateCudaGpus();  // runtime/cuda/cuda_devices.cpp
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

#ifndef GXC_HAVE_CUDA
// The cuda platform's entry point where there is none: the driver refuses GPU device lists
// in such a build, so reaching this is a gxc bug.
CudaPlatformRun runOnCudaPlatform(const Graph&, const std::map<std::string, Tensor>&,
                                  const CudaRunOptions&) {
  GXC_CHECK(false, "the cuda platform was asked to run in a build without CUDA");
  return {};
}
#endif

}  // namespace gxc
