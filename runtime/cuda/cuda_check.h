// CUDA and cuBLAS status codes turned into gxc runtime errors (exit 3), for the cuda platform.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include <fmt/format.h>

#include "ir/diagnostic.h"
#include "runtime/cuda/cuda_cublaslt.h"

namespace gxc {

// A runtime error (exit 3) that CUDA or cuBLAS reported: it names the call and the device or
// stream, not the layer, which GXC_LAUNCH_BLOCKING=1 adds (attributeToLayer in
// cuda_executor.h).
class CudaCallError : public Error {
 public:
  explicit CudaCallError(std::string message) : Error(ErrorKind::Runtime, {}, std::move(message)) {}
};

// A failed CUDA call: "CUDA error: out of memory (cudaMalloc on cuda:0)". `what` says which
// call and where, so the one line names the device (and the layer, where the caller knows it).
inline void checkCuda(cudaError_t status, const std::string& what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // a non-sticky error must not resurface at the next call
  throw CudaCallError(fmt::format("CUDA error: {} ({})", cudaGetErrorString(status), what));
}

inline void checkCublas(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaCallError(
      fmt::format("cuBLAS error: {} ({})", cublasLt().getStatusString(status), what));
}

// Makes `device` current for the scope, and restores the previous one. Destructors pass
// `quiet`: they must not throw, and a failure there has nothing left to clean up.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device, bool quiet = false) {
    cudaError_t status = cudaGetDevice(&previous_);
    if (status == cudaSuccess && previous_ != device) status = cudaSetDevice(device);
    if (quiet) {
      cudaGetLastError();
      return;
    }
    checkCuda(status, fmt::format("making GPU {} current", device));
  }
  ~CudaDeviceGuard() { cudaSetDevice(previous_); }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace gxc
