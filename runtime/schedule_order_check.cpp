// checkArenaReuseOrdered (runtime/schedule.h): happens-before by vector clocks over the
// schedule's streams, and per arena byte range its last writer and the readers since.
#include <map>

#include "runtime/schedule.h"

namespace gxc {
namespace {

// For each op: its stream and position there, and how far into every stream it is ordered
// after (positions from 1; 0: nothing). a happens before b iff b's clock reaches a's position.
class HappensBefore {
 public:
  explicit HappensBefore(const Schedule& schedule) {
    size_t streams = schedule.streams.size();
    std::vector<std::vector<int64_t>> streamClock(streams, std::vector<int64_t>(streams, 0));
    std::map<int64_t, std::vector<int64_t>> eventClock;
    for (const ScheduledOp& scheduled : schedule.ops) {
      std::vector<int64_t>& clock = streamClock[scheduled.stream];
      for (int64_t event : scheduled.waits)
        for (size_t s = 0; s < streams; ++s) clock[s] = std::max(clock[s], eventClock.at(event)[s]);
      ++clock[scheduled.stream];
      if (scheduled.record) eventClock[*scheduled.record] = clock;
      ops_[scheduled.op] = {scheduled.stream, clock};
    }
  }

  bool ordered(const Op* before, const Op* after) const {
    const Entry& a = ops_.at(before);
    const Entry& b = ops_.at(after);
    return b.clock[a.stream] >= a.clock[a.stream];
  }
  size_t streamOf(const Op* op) const { return ops_.at(op).stream; }

 private:
  struct Entry {
    size_t stream;
    std::vector<int64_t> clock;
  };
  std::map<const Op*, Entry> ops_;
};

struct Segment {
  int64_t end = 0;
  const Op* writer = nullptr;
  std::vector<const Op*> readers;
};
using Segments = std::map<int64_t, Segment>;  // by first byte; disjoint

void split(Segments& segments, int64_t byte) {
  auto it = segments.upper_bound(byte);
  if (it == segments.begin()) return;
  --it;
  if (it->first == byte || it->second.end <= byte) return;
  Segment tail = it->second;
  it->second.end = byte;
  segments.emplace(byte, std::move(tail));
}

}  // namespace

void checkArenaReuseOrdered(const Schedule& schedule, const MemoryPlan& plan,
                            const KernelSteps& steps) {
  HappensBefore order(schedule);
  std::map<std::pair<int, int>, Segments> arenas;
  auto requireOrder = [&](const Op* before, const Op* after, const Placement& bytes) {
    GXC_CHECK(order.ordered(before, after),
              "the schedule lets '{}' (stream {}) access bytes [{}, {}) of {}'s arena while "
              "'{}' (stream {}) may still access them: no event orders the two",
              after->layerName(), schedule.streams[order.streamOf(after)].name, bytes.offset,
              bytes.offset + bytes.bytes, bytes.device.str(), before->layerName(),
              schedule.streams[order.streamOf(before)].name);
  };
  // The segments of `bytes`' device covering its range, split at its ends.
  auto range = [&](const Placement& bytes) {
    Segments& segments = arenas[{static_cast<int>(bytes.device.kind), bytes.device.index}];
    split(segments, bytes.offset);
    split(segments, bytes.offset + bytes.bytes);
    return std::pair(segments.lower_bound(bytes.offset),
                     segments.lower_bound(bytes.offset + bytes.bytes));
  };
  for (const ScheduledOp& scheduled : schedule.ops) {
    const KernelStep* step = steps.stepOfRoot(scheduled.op);
    if (!step || step->kind == StepKind::View) continue;  // accesses nothing itself
    const Op* root = step->root();
    for (const Value* input : step->inputs) {
      const Placement& read = plan.placementOf(input);
      if (read.storage != Storage::Arena || read.bytes == 0) continue;
      auto [begin, end] = range(read);
      for (auto it = begin; it != end; ++it) {
        if (it->second.writer) requireOrder(it->second.writer, root, read);
        it->second.readers.push_back(root);
      }
    }
    const Placement& written = plan.placementOf(root->result);
    if (written.storage != Storage::Arena || written.bytes == 0) continue;
    auto [begin, end] = range(written);
    for (auto it = begin; it != end; ++it) {
      if (it->second.writer) requireOrder(it->second.writer, root, written);
      for (const Op* reader : it->second.readers) requireOrder(reader, root, written);
    }
    Segments& segments = arenas[{static_cast<int>(written.device.kind), written.device.index}];
    segments.erase(begin, end);
    segments[written.offset] = Segment{written.offset + written.bytes, root, {}};
  }
}

}  // namespace gxc
