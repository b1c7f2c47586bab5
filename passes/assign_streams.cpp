#include "passes/assign_streams.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "ir/kernel_steps.h"

namespace gxc {

std::string streamOf(const Op& op) {
  if (op.kind != OpKind::Copy) return op.device().str() + ".compute";
  const Device& from = op.operands[0]->type.device;
  const Device& to = op.device();
  if (from.isCpu()) return to.str() + ".h2d";
  if (to.isCpu()) return from.str() + ".d2h";
  return to.str() + ".d2d";
}

int StreamNumbering::numberOf(const Op& op) {
  const bool copy = op.kind == OpKind::Copy;
  const Device& from = copy ? op.operands[0]->type.device : op.device();
  const Key key{copy, from.kind, from.index, op.device().kind, op.device().index};
  auto known = byKey_.find(key);
  if (known != byKey_.end()) return known->second;
  std::string stream = streamOf(op);
  auto [named, added] = byName_.try_emplace(stream, count());
  if (added) names_.push_back(std::move(stream));
  byKey_.emplace(key, named->second);
  return named->second;
}

int StreamNumbering::numberOf(const std::string& name) const {
  auto found = byName_.find(name);
  return found == byName_.end() ? -1 : found->second;
}

namespace {

// How far each stream is known to have progressed: by stream id, the position of its last op
// that is ordered before the point this clock describes (-1, or past the end: none).
using VectorClock = std::vector<int64_t>;

void mergeInto(VectorClock& into, const VectorClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), -1);
  for (size_t stream = 0; stream < from.size(); ++stream)
    into[stream] = std::max(into[stream], from[stream]);
}

int64_t positionIn(const VectorClock& clock, int stream) {
  return static_cast<size_t>(stream) < clock.size() ? clock[static_cast<size_t>(stream)] : -1;
}

struct Scheduled {
  int stream = -1;
  int64_t position = 0;  // index of the op on its stream
  VectorClock clock;     // what is ordered before this op finishes, itself included
  int64_t recordId = -1;
  std::vector<int64_t> waits;  // the events it waits for
};

// Sets `name` to `value` unless it holds that already; whether it changed.
bool setIfDifferent(Attrs& attrs, const std::string& name, AttrValue value) {
  const AttrValue* now = attrs.find(name);
  if (now && *now == value) return false;
  attrs.set(name, std::move(value));
  return true;
}

bool eraseIfPresent(Attrs& attrs, const std::string& name) {
  if (!attrs.has(name)) return false;
  attrs.erase(name);
  return true;
}

// The bytes of a value in its device's arena, by plan-memory's `offset`; none for a resident
// value (a param, a graph input, a view of one), or where memory was not planned.
struct ByteRange {
  Device device;
  int64_t begin = 0;
  int64_t end = 0;
};

std::optional<ByteRange> arenaRange(const Value* value) {
  if (!value->producer || !value->producer->attrs.has("offset")) return std::nullopt;
  int64_t begin = value->producer->attrs.getInt("offset", 0);
  int64_t bytes = value->type.bytes();
  if (bytes == 0) return std::nullopt;
  return ByteRange{value->type.device, begin, begin + bytes};
}

// Who touched each byte of the arenas, as the walk has issued them so far: per device, ranges
// of bytes with their last writer and the readers since. A step that writes a range must
// start after all of those: the previous tenants' readers (write after read) and writer
// (write after write, for a result nobody read). Earlier accesses of the same bytes are
// ordered before that writer already, so they need not be kept.
class ArenaAccesses {
 public:
  void collect(const ByteRange& range, std::vector<const Op*>& out) const {
    auto device = devices_.find(key(range.device));
    if (device == devices_.end()) return;
    const Segments& segments = device->second;
    for (auto it = first(segments, range.begin); it != segments.end() && it->first < range.end;
         ++it) {
      if (it->second.writer) out.push_back(it->second.writer);
      out.insert(out.end(), it->second.readers.begin(), it->second.readers.end());
    }
  }

  void read(const ByteRange& range, const Op* reader) {
    auto& segments = devices_[key(range.device)];
    split(segments, range.begin);
    split(segments, range.end);
    for (auto it = segments.lower_bound(range.begin); it != segments.end() && it->first < range.end;
         ++it) {
      std::vector<const Op*>& readers = it->second.readers;
      if (readers.empty() || readers.back() != reader) readers.push_back(reader);
    }
  }

  void write(const ByteRange& range, const Op* writer) {
    auto& segments = devices_[key(range.device)];
    split(segments, range.begin);
    split(segments, range.end);
    segments.erase(segments.lower_bound(range.begin), segments.lower_bound(range.end));
    segments[range.begin] = Segment{range.end, writer, {}};
  }

 private:
  struct Segment {
    int64_t end = 0;
    const Op* writer = nullptr;
    std::vector<const Op*> readers;
  };
  using Segments = std::map<int64_t, Segment>;  // by first byte; disjoint

  static std::pair<int, int> key(const Device& device) {
    return {static_cast<int>(device.kind), device.index};
  }
  // The first segment that ends after `byte`.
  static Segments::const_iterator first(const Segments& segments, int64_t byte) {
    auto it = segments.upper_bound(byte);
    if (it != segments.begin() && std::prev(it)->second.end > byte) --it;
    return it;
  }
  // A segment boundary at `byte`, where a segment spans it.
  static void split(Segments& segments, int64_t byte) {
    auto it = segments.upper_bound(byte);
    if (it == segments.begin()) return;
    --it;
    if (it->first == byte || it->second.end <= byte) return;
    Segment tail = it->second;
    it->second.end = byte;
    segments.emplace(byte, std::move(tail));
  }

  std::map<std::pair<int, int>, Segments> devices_;
};

}  // namespace

bool AssignStreamsPass::run(Graph& graph, const PassContext&) const {
  // A fused kernel launches once, when its first member issues: that member waits for what
  // the kernel reads and for the earlier tenants of the bytes it writes. The others then find
  // everything ordered already. The kernel's accesses are its last member's, which records.
  KernelSteps steps(graph);
  // Clocks are indexed by stream number, not keyed by name (a clock is copied for every op, and
  // a map of names made that a third of the pass).
  StreamNumbering streams;
  std::unordered_map<const Op*, Scheduled> scheduled;
  scheduled.reserve(graph.ops().size());
  std::vector<VectorClock> streamClocks;  // by stream id: what its next op follows
  std::vector<int64_t> streamLengths;     // by stream id
  ArenaAccesses arenas;
  // The steps that read each param which an assign updates (by their roots, which record).
  std::map<const Value*, std::vector<const Op*>> paramReaders;
  for (const Op* op : graph.ops())
    if (op->kind == OpKind::Assign) paramReaders[op->operands[0]];
  for (const Op* op : graph.ops())
    for (const Value* operand : op->operands) {
      auto readers = paramReaders.find(operand);
      if (readers != paramReaders.end() && op->kind != OpKind::Assign)
        readers->second.push_back(steps.stepOf(op).root());
    }
  int64_t nextEvent = 0;
  for (const Op* op : graph.ops()) {
    if (op->kind == OpKind::Param) continue;  // resident before the run: nothing to order
    for (const Value* operand : op->operands)
      GXC_CHECK(op->kind == OpKind::Copy || operand->type.device == op->device(),
                "assign-streams before insert-copies: '{}' reads '{}' across devices",
                op->layerName(), operand->name);
    Scheduled& self = scheduled[op];
    self.stream = streams.numberOf(*op);
    if (static_cast<size_t>(self.stream) == streamClocks.size()) {
      streamClocks.emplace_back();
      streamLengths.push_back(0);
    }
    VectorClock& clock = streamClocks[static_cast<size_t>(self.stream)];
    const KernelStep& step = steps.stepOf(op);
    std::optional<ByteRange> written;
    if (step.kind != StepKind::View) written = arenaRange(step.root()->result);
    // Ops that must finish before this one starts: the producers of what the step reads,
    // and every earlier access of the bytes it writes.
    std::vector<const Op*> before;
    if (op == step.first()) {
      for (const Value* input : step.inputs)
        if (input->producer && input->producer->kind != OpKind::Param)
          before.push_back(input->producer);
      if (written) arenas.collect(*written, before);
      // An assign overwrites its param: every other reader of the old value goes first.
      if (op->kind == OpKind::Assign)
        for (const Op* reader : paramReaders[op->operands[0]]) before.push_back(reader);
    }
    // Those not yet ordered before this op's stream: not on it, not reached through an
    // earlier wait, and not ordered before another such op (whose event covers them).
    std::vector<Scheduled*> pending;
    for (const Op* earlier : before) {
      Scheduled* source = &scheduled.at(earlier);
      if (positionIn(clock, source->stream) >= source->position) continue;
      if (std::find(pending.begin(), pending.end(), source) == pending.end())
        pending.push_back(source);
    }
    for (Scheduled* source : pending) {
      bool covered = false;
      for (const Scheduled* other : pending)
        covered |= other != source && positionIn(other->clock, source->stream) >= source->position;
      if (covered) continue;
      if (source->recordId < 0) source->recordId = nextEvent++;
      self.waits.push_back(source->recordId);
      mergeInto(clock, source->clock);
    }
    self.position = streamLengths[static_cast<size_t>(self.stream)]++;
    if (clock.size() <= static_cast<size_t>(self.stream))
      clock.resize(static_cast<size_t>(self.stream) + 1, -1);
    clock[static_cast<size_t>(self.stream)] = self.position;
    self.clock = clock;
    if (op == step.root()) {
      for (const Value* input : step.inputs)
        if (auto range = arenaRange(input)) arenas.read(*range, op);
      if (written) arenas.write(*written, op);
    }
  }

  // Only the attributes that differ are rewritten: copying every op's attributes to compare
  // them cost as much as the walk.
  bool changed = false;
  for (Op* op : graph.ops()) {
    auto it = scheduled.find(op);
    if (it == scheduled.end()) {
      for (const char* name : {"stream", "wait", "record"})
        changed |= eraseIfPresent(op->attrs, name);
      continue;
    }
    const Scheduled& self = it->second;
    changed |= setIfDifferent(op->attrs, "stream", streams.name(self.stream));
    changed |= self.recordId >= 0 ? setIfDifferent(op->attrs, "record", self.recordId)
                                  : eraseIfPresent(op->attrs, "record");
    changed |= !self.waits.empty() ? setIfDifferent(op->attrs, "wait", self.waits)
                                   : eraseIfPresent(op->attrs, "wait");
  }
  return changed;
}

}  // namespace gxc
