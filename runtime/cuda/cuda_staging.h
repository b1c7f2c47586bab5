// Pinned staging buffers of the cuda platform: how host<->device copies (and device<->device
// copies between GPUs without peer access) move, as sim_staging.h models them.
//
// Copies from pageable host memory are synchronous and slow (the driver stages them itself
// through a small bounce buffer), so each copy stream owns one pinned buffer, allocated
// (cudaHostAlloc) on first use and reused by every later copy and run; a copy larger than the
// buffer moves chunk by chunk. Everything a copy does is queued on its stream, the host side
// included (cudaLaunchHostFunc copies between the tensor and the pinned buffer), so a copy is
// asynchronous like any other op and the stream's own order makes reusing the buffer safe.
// One buffer per stream, never shared: two streams never race for it.
//
// Requires: the tensors handed in stay alive until the stream has run the copy (they are held
// by shared_ptr for that); device pointers are valid on the stream's GPU (or, for staged
// device-to-device copies, anywhere: addresses are unified).
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/cuda/cuda_stream.h"
#include "tensor/tensor.h"

namespace gxc {

class CudaStagingBuffer {
 public:
  static constexpr int64_t kDefaultBytes = 64 << 20;

  explicit CudaStagingBuffer(int64_t bytes = kDefaultBytes) : bytes_(bytes) {}
  ~CudaStagingBuffer();
  CudaStagingBuffer(const CudaStagingBuffer&) = delete;
  CudaStagingBuffer& operator=(const CudaStagingBuffer&) = delete;

  void toDevice(const CudaStream& stream, std::shared_ptr<const Tensor> host, void* device);
  void toHost(const CudaStream& stream, const void* device, std::shared_ptr<Tensor> host);
  // Device to device through the host, for GPUs that cannot access each other's memory.
  void throughHost(const CudaStream& stream, const void* source, void* destination, int64_t bytes);

  int64_t pinnedAllocations() const { return pinnedAllocations_; }

 private:
  std::byte* pinned();

  int64_t bytes_;
  std::byte* pinned_ = nullptr;
  int64_t pinnedAllocations_ = 0;
};

}  // namespace gxc
