// A caching device-memory allocator with PyTorch's statistics, one per device.
//
// What it does: hands out blocks of a device's memory the way PyTorch's CUDA caching
// allocator does. Requests are rounded up to 512 bytes; a freed block goes back to a cache
// and the best-fitting cached block serves the next request (split when much larger); only
// when nothing cached fits is a new segment reserved from the device (a cudaMalloc), sized as
// PyTorch sizes them (2 MiB for small requests, 20 MiB for medium ones, the request rounded
// to 2 MiB for large ones). As in PyTorch, small requests (up to 1 MiB) and larger ones are
// served from separate pools of segments, so small tensors do not fragment large blocks.
// `releaseCached()` gives wholly free segments back (empty_cache).
//
// Besides, an executor reserves its graph's activation *arena* (passes/plan_memory.h) through
// `allocateArena`: one segment of exactly the plan's bytes (a cudaMalloc of its own, as a CUDA
// graph's private pool or TensorRT's activation memory), never split, never cached, released
// as soon as it is freed. Its bytes count in allocated and reserved like any block's, and
// also in the arena statistics, so "reserved for activations" can be read off the allocator.
//
// By itself this is accounting only: it tracks offsets and sizes, never memory. On `sim` the
// data lives in host Tensors; the allocator decides whether the device could have held them,
// and what memory.stats would have said. The cuda platform puts real memory under the same
// accounting (SegmentMemory: cudaMalloc and cudaFree per segment), and every block then has
// an address.
//
// Requires: a capacity in bytes (the device's memory). Thread-safe: every member may be
// called from any thread.
// Guarantees: reserved never exceeds the capacity; a request that does not fit even after
// releasing the cache throws a gxc runtime error (exit 3) naming the device, the layer, the
// bytes asked for and the bytes free, and leaves every handed-out block as it was (only the
// cache has been released, as PyTorch does before giving up).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "ir/diagnostic.h"

namespace gxc {

// As torch.cuda.memory_stats() names them.
struct MemoryStats {
  int64_t allocatedBytes = 0;      // allocated_bytes.all.current: in blocks handed out
  int64_t peakAllocatedBytes = 0;  // allocated_bytes.all.peak
  int64_t reservedBytes = 0;       // reserved_bytes.all.current: in segments, cached or not
  int64_t peakReservedBytes = 0;   // reserved_bytes.all.peak
  int64_t deviceAllocations = 0;   // segment.all.allocated: cudaMalloc calls
  int64_t deviceFrees = 0;         // segment.all.freed: cudaFree calls
  int64_t allocationRequests = 0;  // allocation.all.allocated: blocks handed out
  int64_t cacheHits = 0;           // requests served from the cache, without a cudaMalloc
  // Not PyTorch's: the part of reserved that holds arenas (allocateArena), and its peak.
  int64_t arenaReservedBytes = 0;
  int64_t peakArenaReservedBytes = 0;
};

class CachingAllocator {
 public:
  static constexpr int64_t kRoundBytes = 512;        // every block is a multiple of this
  static constexpr int64_t kSmallRequest = 1 << 20;  // at most this: served from 2 MiB segments
  static constexpr int64_t kSmallSegment = 2 << 20;
  static constexpr int64_t kMediumRequest = 10 << 20;  // below this: from 20 MiB segments
  static constexpr int64_t kMediumSegment = 20 << 20;
  static constexpr int64_t kLargeRound = 2 << 20;  // larger segments: rounded to 2 MiB

  // A handed-out block; `id` is 0 for the empty block (a zero-byte request reserves nothing).
  struct Block {
    int64_t id = 0;
    int64_t bytes = 0;        // rounded size
    void* address = nullptr;  // with SegmentMemory: the block's memory; else null
  };

  // Real memory under the segments (the cuda platform). `reserve` returns null when the
  // device has no room, which the allocator handles as PyTorch does: release the cache, try
  // once more, then report out of memory.
  class SegmentMemory {
   public:
    virtual ~SegmentMemory() = default;
    virtual void* reserve(int64_t bytes) = 0;
    virtual void release(void* base) = 0;
  };

  // `device` is the device as the run names it ("cuda:1"), for messages.
  CachingAllocator(std::string device, int64_t capacityBytes);
  // With real memory: segments are reserved from and released to `memory`, which must
  // outlive the allocator; the destructor releases every segment.
  CachingAllocator(std::string device, int64_t capacityBytes,
                   std::unique_ptr<SegmentMemory> memory);
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator();

  // `purpose` ("layer 'h'", "param 'W1'") and `loc` say what the memory is for in the
  // out-of-memory message.
  Block allocate(int64_t bytes, const std::string& purpose, const SourceLoc& loc = {});
  // A segment of its own of exactly `bytes` rounded up to kRoundBytes; out of memory as for
  // allocate (after releasing the cache). Freed by free(), which releases the segment.
  Block allocateArena(int64_t bytes, const std::string& purpose, const SourceLoc& loc = {});
  void free(Block block);

  void releaseCached();  // torch.cuda.empty_cache()
  void resetPeaks();     // torch.cuda.reset_peak_memory_stats(): peaks become current values
  MemoryStats stats() const;
  const std::string& device() const { return device_; }
  int64_t capacityBytes() const { return capacity_; }

 private:
  enum class Pool { Small, Large, Arena };
  struct Segment;
  struct BlockInfo {
    Segment* segment;
    int64_t offset;
    int64_t bytes;
    bool free;
  };

  static int64_t segmentSizeFor(int64_t rounded);
  static Pool poolFor(int64_t rounded) {
    return rounded <= kSmallRequest ? Pool::Small : Pool::Large;
  }
  int64_t takeFromCache(int64_t rounded);  // block id or 0
  // 0 when `memory_` has no room for the segment.
  int64_t newSegment(int64_t segmentBytes, int64_t rounded, Pool pool);
  // A new segment for a block of `rounded` bytes (of `bytes` asked), releasing the cache
  // first where that makes room, or the out-of-memory error.
  int64_t reserveOrThrow(int64_t segmentBytes, int64_t rounded, Pool pool, int64_t bytes,
                         const std::string& purpose, const SourceLoc& loc);
  Block handOut(int64_t id);
  void releaseSegment(Segment* segment);
  int64_t split(int64_t blockId, int64_t rounded);
  void releaseCachedLocked();
  int64_t addBlock(Segment* segment, int64_t offset, int64_t bytes, bool isFree);
  void cacheBlock(int64_t id);
  void uncacheBlock(int64_t id);

  const std::string device_;
  const int64_t capacity_;
  std::unique_ptr<SegmentMemory> memory_;
  mutable std::mutex mutex_;
  MemoryStats stats_;
  int64_t nextBlockId_ = 1;
  int64_t nextSegmentId_ = 1;
  std::map<int64_t, BlockInfo> blocks_;
  std::map<int64_t, std::unique_ptr<Segment>> segments_;
  // Free blocks by (pool, bytes, segment, offset, id): the first of the request's pool not
  // smaller than it is the best fit, ties going to the oldest segment (deterministic reuse).
  std::set<std::tuple<Pool, int64_t, int64_t, int64_t, int64_t>> cache_;
};

}  // namespace gxc
