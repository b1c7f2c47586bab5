#include "runtime/cuda/cuda_staging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "runtime/cuda/cuda_check.h"

namespace gxc {
namespace {

// A memcpy queued on a stream (cudaLaunchHostFunc); `keep` holds the host tensor alive until
// it has run. It must not call CUDA, and deletes itself.
struct HostCopy {
  std::shared_ptr<const void> keep;
  void* destination;
  const void* source;
  size_t bytes;

  static void CUDART_CB run(void* self) {
    auto* copy = static_cast<HostCopy*>(self);
    std::memcpy(copy->destination, copy->source, copy->bytes);
    delete copy;
  }
};

void queueHostCopy(const CudaStream& stream, std::shared_ptr<const void> keep, void* destination,
                   const void* source, size_t bytes) {
  auto* copy = new HostCopy{std::move(keep), destination, source, bytes};
  cudaError_t status = cudaLaunchHostFunc(stream.get(), &HostCopy::run, copy);
  if (status != cudaSuccess) delete copy;
  checkCuda(status, fmt::format("queuing a staged copy on {}", stream.name()));
}

}  // namespace

CudaStagingBuffer::~CudaStagingBuffer() {
  if (pinned_) cudaFreeHost(pinned_);
}

std::byte* CudaStagingBuffer::pinned() {
  if (!pinned_) {
    void* memory = nullptr;
    // Portable: any GPU's stream may copy through it.
    checkCuda(cudaHostAlloc(&memory, static_cast<size_t>(bytes_), cudaHostAllocPortable),
              fmt::format("pinning a {}-byte staging buffer", bytes_));
    pinned_ = static_cast<std::byte*>(memory);
    ++pinnedAllocations_;
  }
  return pinned_;
}

void CudaStagingBuffer::toDevice(const CudaStream& stream, std::shared_ptr<const Tensor> host,
                                 void* device) {
  std::byte* buffer = pinned();
  auto* target = static_cast<std::byte*>(device);
  int64_t total = static_cast<int64_t>(host->nbytes());
  for (int64_t at = 0; at < total; at += bytes_) {
    size_t chunk = static_cast<size_t>(std::min(bytes_, total - at));
    queueHostCopy(stream, host, buffer, host->data() + at, chunk);
    checkCuda(cudaMemcpyAsync(target + at, buffer, chunk, cudaMemcpyHostToDevice, stream.get()),
              fmt::format("host-to-device copy on {}", stream.name()));
  }
}

void CudaStagingBuffer::toHost(const CudaStream& stream, const void* device,
                               std::shared_ptr<Tensor> host) {
  std::byte* buffer = pinned();
  const auto* source = static_cast<const std::byte*>(device);
  int64_t total = static_cast<int64_t>(host->nbytes());
  for (int64_t at = 0; at < total; at += bytes_) {
    size_t chunk = static_cast<size_t>(std::min(bytes_, total - at));
    checkCuda(cudaMemcpyAsync(buffer, source + at, chunk, cudaMemcpyDeviceToHost, stream.get()),
              fmt::format("device-to-host copy on {}", stream.name()));
    queueHostCopy(stream, host, host->data() + at, buffer, chunk);
  }
}

void CudaStagingBuffer::throughHost(const CudaStream& stream, const void* source, void* destination,
                                    int64_t bytes) {
  std::byte* buffer = pinned();
  const auto* from = static_cast<const std::byte*>(source);
  auto* to = static_cast<std::byte*>(destination);
  for (int64_t at = 0; at < bytes; at += bytes_) {
    size_t chunk = static_cast<size_t>(std::min(bytes_, bytes - at));
    // cudaMemcpyDefault: the unified address of each side says which GPU it is on.
    checkCuda(cudaMemcpyAsync(buffer, from + at, chunk, cudaMemcpyDefault, stream.get()),
              fmt::format("staged device-to-device copy on {}", stream.name()));
    checkCuda(cudaMemcpyAsync(to + at, buffer, chunk, cudaMemcpyDefault, stream.get()),
              fmt::format("staged device-to-device copy on {}", stream.name()));
  }
}

}  // namespace gxc
