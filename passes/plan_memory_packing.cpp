#include "passes/plan_memory_packing.h"

#include <algorithm>
#include <limits>

namespace gxc {
namespace {

// The non-resident buffers sorted by first step, as an implicit balanced search tree: the root
// of a range [lo, hi) of that order is its middle element, and maxLast_ at the root is the
// latest last step in the range. A query visits only the ranges that can hold an overlapping
// buffer, so it costs O(log n + the buffers overlapping the query).
class LifetimeTree {
 public:
  LifetimeTree(const std::vector<BufferLifetime>& buffers, std::vector<size_t> members)
      : buffers_(buffers), sorted_(std::move(members)) {
    std::stable_sort(sorted_.begin(), sorted_.end(), [&](size_t a, size_t b) {
      return buffers_[a].firstStep < buffers_[b].firstStep;
    });
    maxLast_.resize(sorted_.size());
    placed_.assign(sorted_.size(), false);
    positionOf_.resize(buffers_.size());
    for (size_t position = 0; position < sorted_.size(); ++position)
      positionOf_[sorted_[position]] = position;
    build(0, sorted_.size());
  }

  void markPlaced(size_t buffer) { placed_[positionOf_[buffer]] = true; }

  // Appends the placed buffers whose lifetimes overlap [first, last].
  void collectOverlapping(int64_t first, int64_t last, std::vector<size_t>& out) const {
    collect(0, sorted_.size(), first, last, out);
  }

 private:
  int64_t build(size_t lo, size_t hi) {
    if (lo >= hi) return std::numeric_limits<int64_t>::min();
    size_t mid = lo + (hi - lo) / 2;
    int64_t left = build(lo, mid);
    int64_t right = build(mid + 1, hi);
    maxLast_[mid] = std::max({buffers_[sorted_[mid]].lastStep, left, right});
    return maxLast_[mid];
  }

  void collect(size_t lo, size_t hi, int64_t first, int64_t last, std::vector<size_t>& out) const {
    if (lo >= hi) return;
    size_t mid = lo + (hi - lo) / 2;
    if (maxLast_[mid] < first) return;  // everything here ends before the query starts
    collect(lo, mid, first, last, out);
    const BufferLifetime& buffer = buffers_[sorted_[mid]];
    if (buffer.firstStep > last) return;  // this one and all to its right start after it
    if (placed_[mid] && buffer.lastStep >= first) out.push_back(sorted_[mid]);
    collect(mid + 1, hi, first, last, out);
  }

  const std::vector<BufferLifetime>& buffers_;
  std::vector<size_t> sorted_;
  std::vector<int64_t> maxLast_;
  std::vector<bool> placed_;
  std::vector<size_t> positionOf_;
};

// The smallest gap at or above `base` between the `neighbours` (sorted by offset) that holds
// `bytes`, or the first byte above all of them.
int64_t bestFit(int64_t bytes, int64_t base, const std::vector<size_t>& neighbours,
                const std::vector<BufferLifetime>& buffers, const std::vector<int64_t>& offsets) {
  int64_t cursor = base;
  int64_t best = -1;
  int64_t bestGap = std::numeric_limits<int64_t>::max();
  for (size_t neighbour : neighbours) {
    int64_t start = offsets[neighbour];
    if (start - cursor >= bytes && start - cursor < bestGap) {
      best = cursor;
      bestGap = start - cursor;
    }
    cursor = std::max(cursor, start + buffers[neighbour].bytes);
  }
  return best >= 0 ? best : cursor;
}

}  // namespace

Packing packBuffers(const std::vector<BufferLifetime>& buffers) {
  Packing packing;
  packing.offsets.assign(buffers.size(), 0);
  int64_t base = 0;
  std::vector<size_t> others;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].bytes == 0) continue;  // takes no memory; offset 0 by convention
    if (buffers[i].resident) {
      packing.offsets[i] = base;
      base += buffers[i].bytes;
    } else {
      others.push_back(i);
    }
  }
  packing.peakBytes = base;

  LifetimeTree tree(buffers, others);
  std::vector<size_t> order = others;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].firstStep < buffers[b].firstStep;
  });
  std::vector<size_t> neighbours;
  for (size_t i : order) {
    neighbours.clear();
    tree.collectOverlapping(buffers[i].firstStep, buffers[i].lastStep, neighbours);
    std::sort(neighbours.begin(), neighbours.end(),
              [&](size_t a, size_t b) { return packing.offsets[a] < packing.offsets[b]; });
    int64_t offset = bestFit(buffers[i].bytes, base, neighbours, buffers, packing.offsets);
    packing.offsets[i] = offset;
    tree.markPlaced(i);
    packing.peakBytes = std::max(packing.peakBytes, offset + buffers[i].bytes);
  }
  return packing;
}

}  // namespace gxc
