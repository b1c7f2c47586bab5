// Phase 2 of plan-memory: offsets in one device's arena for activations with known lifetimes,
// by greedy by size with best fit (the essay is in plan_memory.h).
#pragma once

#include <cstdint>
#include <vector>

namespace gxc {

// Two buffers may share bytes when the later one's writer is ordered after every access of the
// earlier one. In program order that is when their lifetimes do not overlap; across streams,
// the writer's stream must also be ordered after the earlier buffer's accesses, which
// `lastFor` says per stream.
struct BufferLifetime {
  int64_t firstStep = 0;  // live over [firstStep, lastStep], both inclusive
  int64_t lastStep = 0;
  int64_t bytes = 0;  // already rounded to the arena's alignment
  int writer = 0;     // the stream that writes it: an index among the device's writing streams
  // Per writing stream s: the last step at which a buffer written by s may not start on these
  // bytes (s is not yet ordered after every access of this one); at least lastStep. Empty:
  // lastStep for every stream (one stream, or program order alone).
  std::vector<int64_t> lastFor;
};

struct Packing {
  std::vector<int64_t> offsets;  // one per buffer, in the order given
  int64_t peakBytes = 0;         // the arena's size: the highest end of any buffer
};

// Buffers that may not share bytes get disjoint byte ranges; zero-byte buffers get offset 0.
// Requires: the sum of all bytes fits in int64 (no offset can then overflow); every lastFor of
// one size (the device's writing streams), covering every writer. Deterministic: ties in size go
// to the buffer that starts first, then to the one given first.
Packing packBuffers(const std::vector<BufferLifetime>& buffers);

}  // namespace gxc
