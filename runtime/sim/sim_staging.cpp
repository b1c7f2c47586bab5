#include "runtime/sim/sim_staging.h"

#include <algorithm>
#include <cstring>

#include "ir/diagnostic.h"

namespace gxc {

struct SimStagingBuffers::Buffers {
  std::mutex inUse;                    // held for a whole copy, so two copies never interleave
  std::unique_ptr<std::byte[]> bytes;  // two buffers of chunkBytes, one after the other
};

SimStagingBuffers::SimStagingBuffers(int64_t chunkBytes) : chunkBytes_(chunkBytes) {
  GXC_CHECK(chunkBytes > 0, "staging chunks of {} bytes", chunkBytes);
}

SimStagingBuffers::~SimStagingBuffers() = default;

SimStagingBuffers::Buffers& SimStagingBuffers::buffersFor(int gpu, CopyDirection direction) {
  GXC_CHECK(direction == CopyDirection::HostToDevice || direction == CopyDirection::DeviceToHost,
            "staging buffer asked for a copy that does not cross the host boundary");
  std::lock_guard lock(mutex_);
  std::unique_ptr<Buffers>& slot = buffers_[{gpu, direction}];
  if (!slot) {
    slot = std::make_unique<Buffers>();
    // Left uninitialized: pages are touched only as far as copies reach.
    slot->bytes = std::make_unique_for_overwrite<std::byte[]>(2 * static_cast<size_t>(chunkBytes_));
    ++pinnedAllocations_;
  }
  return *slot;
}

void SimStagingBuffers::copy(int gpu, CopyDirection direction, const std::byte* source,
                             std::byte* destination, size_t bytes) {
  Buffers& buffers = buffersFor(gpu, direction);
  std::lock_guard lock(buffers.inUse);
  size_t chunk = static_cast<size_t>(chunkBytes_);
  size_t index = 0;
  for (size_t done = 0; done < bytes; done += chunk, ++index) {
    size_t now = std::min(chunk, bytes - done);
    std::byte* buffer = buffers.bytes.get() + (index % 2) * chunk;
    // Toward the GPU the memcpy fills the buffer and the DMA empties it; toward the host the
    // other way round. Either way the bytes pass through buffer index % 2.
    std::memcpy(buffer, source + done, now);
    std::memcpy(destination + done, buffer, now);
  }
}

int64_t SimStagingBuffers::pinnedAllocations() const {
  std::lock_guard lock(mutex_);
  return pinnedAllocations_;
}

}  // namespace gxc
