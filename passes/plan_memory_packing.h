// Phase 2 of plan-memory: offsets in one device's arena for buffers with known lifetimes, by
// greedy by size with best fit (the essay is in plan_memory.h).
#pragma once

#include <cstdint>
#include <vector>

namespace gxc {

struct BufferLifetime {
  int64_t firstStep = 0;  // live over [firstStep, lastStep], both inclusive
  int64_t lastStep = 0;
  int64_t bytes = 0;      // already rounded to the arena's alignment
  bool resident = false;  // live for the whole run: stacked at the bottom, in the given order
};

struct Packing {
  std::vector<int64_t> offsets;  // one per buffer, in the order given
  int64_t peakBytes = 0;         // the arena's size: the highest end of any buffer
};

// Buffers whose lifetimes overlap get disjoint byte ranges; zero-byte buffers get offset 0.
// Requires: the sum of all bytes fits in int64 (no offset can then overflow). Deterministic:
// ties in size go to the buffer that starts first, then to the one given first.
Packing packBuffers(const std::vector<BufferLifetime>& buffers);

}  // namespace gxc
