#include "runtime/cuda/cuda_allocator.h"

#include <fmt/format.h>

#include "runtime/cuda/cuda_check.h"

namespace gxc {
namespace {

class CudaSegmentMemory : public CachingAllocator::SegmentMemory {
 public:
  explicit CudaSegmentMemory(int device) : device_(device) {}

  void* reserve(int64_t bytes) override {
    CudaDeviceGuard guard(device_);
    void* memory = nullptr;
    cudaError_t status = cudaMalloc(&memory, static_cast<size_t>(bytes));
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: the allocator releases its cache and tries again
      return nullptr;
    }
    checkCuda(status, fmt::format("cudaMalloc of {} bytes on GPU {}", bytes, device_));
    return memory;
  }

  void release(void* base) override {
    CudaDeviceGuard guard(device_, /*quiet=*/true);
    cudaFree(base);
  }

 private:
  int device_;
};

}  // namespace

std::unique_ptr<CachingAllocator> makeCudaCachingAllocator(const std::string& name, int cudaDevice,
                                                           int64_t capacityBytes) {
  return std::make_unique<CachingAllocator>(name, capacityBytes,
                                            std::make_unique<CudaSegmentMemory>(cudaDevice));
}

}  // namespace gxc
