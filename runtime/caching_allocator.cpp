#include "runtime/caching_allocator.h"

#include <algorithm>
#include <cstddef>

#include "target/byte_size.h"

namespace gxc {

struct CachingAllocator::Segment {
  int64_t id;
  int64_t bytes;
  Pool pool;
  void* base;                                 // null without SegmentMemory
  std::map<int64_t, int64_t> blocksByOffset;  // offset -> block id, covering the segment
};

namespace {

int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

CachingAllocator::CachingAllocator(std::string device, int64_t capacityBytes)
    : device_(std::move(device)), capacity_(capacityBytes) {
  GXC_CHECK(capacityBytes >= 0, "{}: capacity of {} bytes", device_, capacityBytes);
}

CachingAllocator::CachingAllocator(std::string device, int64_t capacityBytes,
                                   std::unique_ptr<SegmentMemory> memory)
    : CachingAllocator(std::move(device), capacityBytes) {
  memory_ = std::move(memory);
}

CachingAllocator::~CachingAllocator() {
  if (!memory_) return;
  for (auto& [id, segment] : segments_) memory_->release(segment->base);
}

int64_t CachingAllocator::segmentSizeFor(int64_t rounded) {
  // PyTorch's sizes (CUDACachingAllocator.cpp, get_allocation_size): small requests share
  // 2 MiB segments, medium ones 20 MiB segments, so that many small tensors cost few
  // cudaMallocs; large ones get a segment of their own.
  if (rounded <= kSmallRequest) return kSmallSegment;
  if (rounded < kMediumRequest) return kMediumSegment;
  return roundUp(rounded, kLargeRound);
}

int64_t CachingAllocator::addBlock(Segment* segment, int64_t offset, int64_t bytes, bool isFree) {
  int64_t id = nextBlockId_++;
  blocks_[id] = BlockInfo{segment, offset, bytes, isFree};
  segment->blocksByOffset[offset] = id;
  if (isFree) cacheBlock(id);
  return id;
}

void CachingAllocator::cacheBlock(int64_t id) {
  const BlockInfo& block = blocks_.at(id);
  cache_.emplace(block.segment->pool, block.bytes, block.segment->id, block.offset, id);
}

void CachingAllocator::uncacheBlock(int64_t id) {
  const BlockInfo& block = blocks_.at(id);
  cache_.erase({block.segment->pool, block.bytes, block.segment->id, block.offset, id});
}

int64_t CachingAllocator::split(int64_t blockId, int64_t rounded) {
  BlockInfo& block = blocks_.at(blockId);
  int64_t remaining = block.bytes - rounded;
  // PyTorch's rule (should_split): a small request leaves any usable remainder; a large
  // one only a remainder over 1 MiB, so big segments do not crumble into slivers.
  bool worthIt = rounded <= kSmallRequest ? remaining >= kRoundBytes : remaining > kSmallRequest;
  if (worthIt) {
    block.bytes = rounded;
    addBlock(block.segment, block.offset + rounded, remaining, /*isFree=*/true);
  }
  return blockId;
}

int64_t CachingAllocator::takeFromCache(int64_t rounded) {
  Pool pool = poolFor(rounded);
  auto it = cache_.lower_bound({pool, rounded, 0, 0, 0});
  if (it == cache_.end() || std::get<0>(*it) != pool) return 0;
  int64_t id = std::get<4>(*it);
  cache_.erase(it);
  blocks_.at(id).free = false;
  return split(id, rounded);
}

int64_t CachingAllocator::newSegment(int64_t segmentBytes, int64_t rounded, Pool pool) {
  void* base = nullptr;
  if (memory_) {
    base = memory_->reserve(segmentBytes);
    if (!base) return 0;
  }
  int64_t segmentId = nextSegmentId_++;
  auto segment = std::make_unique<Segment>(Segment{segmentId, segmentBytes, pool, base, {}});
  Segment* raw = segment.get();
  segments_[segmentId] = std::move(segment);
  stats_.reservedBytes += segmentBytes;
  stats_.peakReservedBytes = std::max(stats_.peakReservedBytes, stats_.reservedBytes);
  if (pool == Pool::Arena) {
    stats_.arenaReservedBytes += segmentBytes;
    stats_.peakArenaReservedBytes =
        std::max(stats_.peakArenaReservedBytes, stats_.arenaReservedBytes);
  }
  ++stats_.deviceAllocations;
  int64_t id = addBlock(raw, 0, segmentBytes, /*isFree=*/false);
  return pool == Pool::Arena ? id : split(id, rounded);
}

int64_t CachingAllocator::reserveOrThrow(int64_t segmentBytes, int64_t rounded, Pool pool,
                                         int64_t bytes, const std::string& purpose,
                                         const SourceLoc& loc) {
  // As PyTorch does before reporting out of memory: give the cache back and try again.
  if (stats_.reservedBytes + segmentBytes > capacity_) releaseCachedLocked();
  // Near the limit, a segment of exactly the request still fits where a rounded one won't.
  if (stats_.reservedBytes + segmentBytes > capacity_) segmentBytes = rounded;
  auto outOfMemory = [&]() {
    runtimeError(loc,
                 "{} out of memory: tried to allocate {} ({}); {} free of {} ({} "
                 "allocated, {} reserved)",
                 device_, formatBytes(bytes), purpose,
                 formatBytes(capacity_ - stats_.reservedBytes), formatBytes(capacity_),
                 formatBytes(stats_.allocatedBytes), formatBytes(stats_.reservedBytes));
  };
  if (stats_.reservedBytes + segmentBytes > capacity_) outOfMemory();
  int64_t id = newSegment(segmentBytes, rounded, pool);
  // Real memory can be short of the capacity (other processes use the GPU too).
  if (id == 0) {
    releaseCachedLocked();
    id = newSegment(segmentBytes, rounded, pool);
  }
  if (id == 0) outOfMemory();
  return id;
}

CachingAllocator::Block CachingAllocator::handOut(int64_t id) {
  const BlockInfo& block = blocks_.at(id);
  ++stats_.allocationRequests;
  stats_.allocatedBytes += block.bytes;
  stats_.peakAllocatedBytes = std::max(stats_.peakAllocatedBytes, stats_.allocatedBytes);
  void* address =
      block.segment->base ? static_cast<std::byte*>(block.segment->base) + block.offset : nullptr;
  return {id, block.bytes, address};
}

CachingAllocator::Block CachingAllocator::allocate(int64_t bytes, const std::string& purpose,
                                                   const SourceLoc& loc) {
  GXC_CHECK(bytes >= 0, "{}: allocation of {} bytes for {}", device_, bytes, purpose);
  if (bytes == 0) return {};
  int64_t rounded = roundUp(bytes, kRoundBytes);
  std::lock_guard lock(mutex_);
  int64_t id = takeFromCache(rounded);
  if (id != 0)
    ++stats_.cacheHits;
  else
    id = reserveOrThrow(segmentSizeFor(rounded), rounded, poolFor(rounded), bytes, purpose, loc);
  return handOut(id);
}

CachingAllocator::Block CachingAllocator::allocateArena(int64_t bytes, const std::string& purpose,
                                                        const SourceLoc& loc) {
  GXC_CHECK(bytes >= 0, "{}: arena of {} bytes for {}", device_, bytes, purpose);
  if (bytes == 0) return {};
  int64_t rounded = roundUp(bytes, kRoundBytes);
  std::lock_guard lock(mutex_);
  return handOut(reserveOrThrow(rounded, rounded, Pool::Arena, bytes, purpose, loc));
}

void CachingAllocator::free(Block handle) {
  if (handle.id == 0) return;
  std::lock_guard lock(mutex_);
  auto it = blocks_.find(handle.id);
  GXC_CHECK(it != blocks_.end() && !it->second.free, "{}: free of unknown block {}", device_,
            handle.id);
  int64_t id = handle.id;
  BlockInfo& block = it->second;
  block.free = true;
  stats_.allocatedBytes -= block.bytes;
  if (block.segment->pool == Pool::Arena) {  // never cached: its segment goes at once
    Segment* segment = block.segment;
    blocks_.erase(it);
    releaseSegment(segment);
    return;
  }
  // Merge with free neighbours in the segment, so a segment whose blocks are all free
  // becomes one block again and can be released.
  Segment* segment = block.segment;
  auto here = segment->blocksByOffset.find(block.offset);
  if (auto next = std::next(here); next != segment->blocksByOffset.end()) {
    int64_t nextId = next->second;
    if (blocks_.at(nextId).free) {
      uncacheBlock(nextId);
      block.bytes += blocks_.at(nextId).bytes;
      segment->blocksByOffset.erase(next);
      blocks_.erase(nextId);
    }
  }
  if (here != segment->blocksByOffset.begin()) {
    auto previous = std::prev(here);
    int64_t previousId = previous->second;
    BlockInfo& before = blocks_.at(previousId);
    if (before.free) {
      uncacheBlock(previousId);
      before.bytes += block.bytes;
      segment->blocksByOffset.erase(here);
      blocks_.erase(id);
      id = previousId;
    }
  }
  cacheBlock(id);
}

void CachingAllocator::releaseCachedLocked() {
  for (auto it = segments_.begin(); it != segments_.end();) {
    Segment& segment = *it->second;
    bool wholeSegmentFree = segment.blocksByOffset.size() == 1 &&
                            blocks_.at(segment.blocksByOffset.begin()->second).free;
    if (!wholeSegmentFree) {
      ++it;
      continue;
    }
    int64_t id = segment.blocksByOffset.begin()->second;
    uncacheBlock(id);
    blocks_.erase(id);
    ++it;
    releaseSegment(&segment);
  }
}

void CachingAllocator::releaseSegment(Segment* segment) {
  stats_.reservedBytes -= segment->bytes;
  if (segment->pool == Pool::Arena) stats_.arenaReservedBytes -= segment->bytes;
  ++stats_.deviceFrees;
  if (memory_) memory_->release(segment->base);
  segments_.erase(segment->id);
}

void CachingAllocator::releaseCached() {
  std::lock_guard lock(mutex_);
  releaseCachedLocked();
}

void CachingAllocator::resetPeaks() {
  std::lock_guard lock(mutex_);
  stats_.peakAllocatedBytes = stats_.allocatedBytes;
  stats_.peakReservedBytes = stats_.reservedBytes;
  stats_.peakArenaReservedBytes = stats_.arenaReservedBytes;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace gxc
