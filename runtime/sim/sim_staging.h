// Pinned host staging buffers of the `sim` platform, through which host<->device copies go,
// as the cuda platform's go (runtime/cuda/cuda_staging.h).
//
// What it does: keeps one "pinned" host allocation per virtual GPU and direction (host to
// device, device to host), split into two buffers of `chunkBytes`, allocated on first use and
// reused by every later copy and run. A copy moves chunk by chunk, chunk i through buffer
// i % 2: the host memcpy between the tensor and the buffer, and the "DMA" between the buffer
// and the GPU's memory. Pinning memory (cudaHostAlloc) is slow, so pinning per copy is a known
// slowdown; the count of pinnings lets tests show it happens once per (GPU, direction). On
// `sim` the buffers are ordinary host memory and the legs run one after the other: the data
// really passes through both buffers, so a bug in the chunking corrupts results, while the
// clock charges the pipeline the cuda platform runs, chunk i+1's memcpy beside chunk i's DMA
// (simStagedCopySeconds in target/cost_model.h).
//
// Requires: `chunkBytes` > 0. Thread-safe; copies on the same buffers take turns (each
// direction of a GPU has its own copy stream, so they rarely meet).
// Guarantees: at most one pinning per (GPU, direction) over the object's life.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "target/cost_model.h"

namespace gxc {

class SimStagingBuffers {
 public:
  static constexpr int64_t kDefaultChunkBytes = kStagingChunkBytes;

  explicit SimStagingBuffers(int64_t chunkBytes = kDefaultChunkBytes);
  SimStagingBuffers(const SimStagingBuffers&) = delete;
  SimStagingBuffers& operator=(const SimStagingBuffers&) = delete;
  ~SimStagingBuffers();

  // Copies `bytes` from `source` to `destination` through the buffers of (`gpu`, `direction`);
  // `direction` is HostToDevice or DeviceToHost.
  void copy(int gpu, CopyDirection direction, const std::byte* source, std::byte* destination,
            size_t bytes);

  int64_t chunkBytes() const { return chunkBytes_; }
  int64_t pinnedAllocations() const;  // cudaHostAlloc calls so far

 private:
  struct Buffers;
  Buffers& buffersFor(int gpu, CopyDirection direction);

  const int64_t chunkBytes_;
  mutable std::mutex mutex_;  // guards the map and the count, not the buffers' contents
  std::map<std::pair<int, CopyDirection>, std::unique_ptr<Buffers>> buffers_;
  int64_t pinnedAllocations_ = 0;
};

}  // namespace gxc
