#include "runtime/sim/sim_staging.h"

#include <algorithm>
#include <cstring>

#include "ir/diagnostic.h"

namespace gxc {

struct SimStagingBuffers::Buffer {
  std::mutex inUse;  // held for a whole copy, so chunks of two copies never interleave
  std::unique_ptr<std::byte[]> bytes;
};

SimStagingBuffers::SimStagingBuffers(int64_t bufferBytes) : bufferBytes_(bufferBytes) {
  GXC_CHECK(bufferBytes > 0, "staging buffers of {} bytes", bufferBytes);
}

SimStagingBuffers::~SimStagingBuffers() = default;

SimStagingBuffers::Buffer& SimStagingBuffers::bufferFor(int gpu, CopyDirection direction) {
  GXC_CHECK(direction == CopyDirection::HostToDevice || direction == CopyDirection::DeviceToHost,
            "staging buffer asked for a copy that does not cross the host boundary");
  std::lock_guard lock(mutex_);
  std::unique_ptr<Buffer>& slot = buffers_[{gpu, direction}];
  if (!slot) {
    slot = std::make_unique<Buffer>();
    // Left uninitialized: pages are touched only as far as copies reach.
    slot->bytes = std::make_unique_for_overwrite<std::byte[]>(static_cast<size_t>(bufferBytes_));
    ++pinnedAllocations_;
  }
  return *slot;
}

void SimStagingBuffers::copy(int gpu, CopyDirection direction, const std::byte* source,
                             std::byte* destination, size_t bytes) {
  Buffer& buffer = bufferFor(gpu, direction);
  std::lock_guard lock(buffer.inUse);
  size_t chunk = static_cast<size_t>(bufferBytes_);
  for (size_t done = 0; done < bytes; done += chunk) {
    size_t now = std::min(chunk, bytes - done);
    // One leg is the host memcpy into (or out of) pinned memory, the other the DMA.
    std::memcpy(buffer.bytes.get(), source + done, now);
    std::memcpy(destination + done, buffer.bytes.get(), now);
  }
}

int64_t SimStagingBuffers::pinnedAllocations() const {
  std::lock_guard lock(mutex_);
  return pinnedAllocations_;
}

}  // namespace gxc
