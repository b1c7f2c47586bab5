// Pinned host staging buffers of the `sim` platform, through which host<->device copies go.
//
// What it does: keeps one fixed-size "pinned" host buffer per virtual GPU and direction
// (host-to-device, device-to-host), allocated on first use and reused by every later copy
// and run; a copy larger than the buffer moves chunk by chunk. Pinning memory
// (cudaHostAlloc) is slow, so pinning per copy is a known slowdown; the count of pinnings
// lets tests show it happens once per buffer. On `sim` the buffer is ordinary host memory:
// the data really passes through it, so a bug in the chunking corrupts results.
//
// Requires: `bufferBytes` > 0. Thread-safe; copies on the same buffer take turns (each
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
  static constexpr int64_t kDefaultBytes = 64 << 20;

  explicit SimStagingBuffers(int64_t bufferBytes = kDefaultBytes);
  SimStagingBuffers(const SimStagingBuffers&) = delete;
  SimStagingBuffers& operator=(const SimStagingBuffers&) = delete;
  ~SimStagingBuffers();

  // Copies `bytes` from `source` to `destination` through the buffer of (`gpu`, `direction`);
  // `direction` is HostToDevice or DeviceToHost.
  void copy(int gpu, CopyDirection direction, const std::byte* source, std::byte* destination,
            size_t bytes);

  int64_t bufferBytes() const { return bufferBytes_; }
  int64_t pinnedAllocations() const;  // cudaHostAlloc calls so far

 private:
  struct Buffer;
  Buffer& bufferFor(int gpu, CopyDirection direction);

  const int64_t bufferBytes_;
  mutable std::mutex mutex_;  // guards the map and the count, not the buffers' contents
  std::map<std::pair<int, CopyDirection>, std::unique_ptr<Buffer>> buffers_;
  int64_t pinnedAllocations_ = 0;
};

}  // namespace gxc
