#include "passes/plan_memory_packing.h"

#include <algorithm>
#include <limits>

namespace gxc {
namespace {

struct Interval {
  int64_t first = 0;
  int64_t last = 0;
};

// Intervals sorted by first step, as an implicit balanced search tree: the root of a range
// [lo, hi) of that order is its middle element, and maxLast_ at the root is the latest last
// step in the range. A query visits only the ranges that can hold an overlapping interval, so
// it costs O(log n + the intervals overlapping the query).
class LifetimeTree {
 public:
  // `intervals` by buffer index; the tree holds `members`.
  LifetimeTree(std::vector<Interval> intervals, std::vector<size_t> members)
      : intervals_(std::move(intervals)), sorted_(std::move(members)) {
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [&](size_t a, size_t b) { return intervals_[a].first < intervals_[b].first; });
    maxLast_.resize(sorted_.size());
    placed_.assign(sorted_.size(), false);
    positionOf_.assign(intervals_.size(), kAbsent);
    for (size_t position = 0; position < sorted_.size(); ++position)
      positionOf_[sorted_[position]] = position;
    build(0, sorted_.size());
  }

  void markPlaced(size_t buffer) {
    if (positionOf_[buffer] != kAbsent) placed_[positionOf_[buffer]] = true;
  }

  // Appends the placed members whose intervals overlap [first, last].
  void collectOverlapping(int64_t first, int64_t last, std::vector<size_t>& out) const {
    collect(0, sorted_.size(), first, last, out);
  }

 private:
  static constexpr size_t kAbsent = static_cast<size_t>(-1);

  int64_t build(size_t lo, size_t hi) {
    if (lo >= hi) return std::numeric_limits<int64_t>::min();
    size_t mid = lo + (hi - lo) / 2;
    int64_t left = build(lo, mid);
    int64_t right = build(mid + 1, hi);
    maxLast_[mid] = std::max({intervals_[sorted_[mid]].last, left, right});
    return maxLast_[mid];
  }

  void collect(size_t lo, size_t hi, int64_t first, int64_t last, std::vector<size_t>& out) const {
    if (lo >= hi) return;
    size_t mid = lo + (hi - lo) / 2;
    if (maxLast_[mid] < first) return;  // everything here ends before the query starts
    collect(lo, mid, first, last, out);
    const Interval& interval = intervals_[sorted_[mid]];
    if (interval.first > last) return;  // this one and all to its right start after it
    if (placed_[mid] && interval.last >= first) out.push_back(sorted_[mid]);
    collect(mid + 1, hi, first, last, out);
  }

  std::vector<Interval> intervals_;
  std::vector<size_t> sorted_;
  std::vector<int64_t> maxLast_;
  std::vector<bool> placed_;
  std::vector<size_t> positionOf_;
};

int64_t lastFor(const BufferLifetime& buffer, size_t stream) {
  return buffer.lastFor.empty() ? buffer.lastStep : buffer.lastFor[stream];
}

// The placed buffers that may not share bytes with a buffer, whatever their sizes. For a pair
// where `early` starts no later than `late`, that is when late starts by early's lastFor of
// late's writer. So, for buffer b: (1) the buffers whose intervals, stretched to their lastFor
// of b's writer, overlap b's lifetime, and (2) per writing stream s, the buffers s writes whose
// lifetimes overlap b's lifetime stretched to b's lastFor of s.
class Conflicts {
 public:
  Conflicts(const std::vector<BufferLifetime>& buffers, const std::vector<size_t>& members)
      : buffers_(buffers) {
    size_t streams = 1;
    for (size_t i : members)
      streams = std::max(
          {streams, buffers[i].lastFor.size(), static_cast<size_t>(buffers[i].writer) + 1});
    for (size_t s = 0; s < streams; ++s) {
      std::vector<Interval> stretched(buffers.size()), own(buffers.size());
      std::vector<size_t> writtenByS;
      for (size_t i : members) {
        stretched[i] = {buffers[i].firstStep, lastFor(buffers[i], s)};
        own[i] = {buffers[i].firstStep, buffers[i].lastStep};
        if (static_cast<size_t>(buffers[i].writer) == s) writtenByS.push_back(i);
      }
      stretchedFor_.emplace_back(std::move(stretched), members);
      writtenBy_.emplace_back(std::move(own), std::move(writtenByS));
    }
  }

  void markPlaced(size_t buffer) {
    for (LifetimeTree& tree : stretchedFor_) tree.markPlaced(buffer);
    for (LifetimeTree& tree : writtenBy_) tree.markPlaced(buffer);
  }

  // The placed buffers that conflict with `buffer`, each once, in no particular order.
  void collect(size_t buffer, std::vector<size_t>& out) const {
    const BufferLifetime& b = buffers_[buffer];
    stretchedFor_[static_cast<size_t>(b.writer)].collectOverlapping(b.firstStep, b.lastStep, out);
    for (size_t s = 0; s < writtenBy_.size(); ++s)
      writtenBy_[s].collectOverlapping(b.firstStep, lastFor(b, s), out);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

 private:
  const std::vector<BufferLifetime>& buffers_;
  std::vector<LifetimeTree> stretchedFor_;  // by writing stream
  std::vector<LifetimeTree> writtenBy_;     // by writing stream
};

// The smallest gap between the `neighbours` (sorted by offset) that holds `bytes`, or the
// first byte above all of them.
int64_t bestFit(int64_t bytes, const std::vector<size_t>& neighbours,
                const std::vector<BufferLifetime>& buffers, const std::vector<int64_t>& offsets) {
  int64_t cursor = 0;
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
  std::vector<size_t> others;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].bytes > 0) others.push_back(i);  // else no memory: offset 0 by convention

  Conflicts conflicts(buffers, others);
  std::vector<size_t> order = others;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].firstStep < buffers[b].firstStep;
  });
  std::vector<size_t> neighbours;
  for (size_t i : order) {
    neighbours.clear();
    conflicts.collect(i, neighbours);
    std::sort(neighbours.begin(), neighbours.end(),
              [&](size_t a, size_t b) { return packing.offsets[a] < packing.offsets[b]; });
    int64_t offset = bestFit(buffers[i].bytes, neighbours, buffers, packing.offsets);
    packing.offsets[i] = offset;
    conflicts.markPlaced(i);
    packing.peakBytes = std::max(packing.peakBytes, offset + buffers[i].bytes);
  }
  return packing;
}

}  // namespace gxc
