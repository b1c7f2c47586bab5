// The caching allocator of the cuda platform: runtime/caching_allocator.h's accounting and
// statistics (PyTorch's), with every segment a real cudaMalloc on one GPU.
#pragma once

#include <memory>
#include <string>

#include "runtime/caching_allocator.h"

namespace gxc {

// `name` is the device as the run names it ("cuda:0"), `cudaDevice` the GPU behind it.
// Capacity: what the run may allocate there (usableGpuMemory in gpu_devices.h: free once the
// context exists, less cuBLASLt's workspace), the number plan-memory checked the plan against.
// cudaMalloc may still fail earlier (other processes allocating since), which the allocator
// reports as out of memory after releasing its cache.
std::unique_ptr<CachingAllocator> makeCudaCachingAllocator(const std::string& name, int cudaDevice,
                                                           int64_t capacityBytes);

}  // namespace gxc
