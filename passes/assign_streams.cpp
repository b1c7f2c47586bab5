#include "passes/assign_streams.h"

#include <algorithm>
#include <map>

#include "ir/fused_kernel.h"

namespace gxc {

std::string streamOf(const Op& op) {
  if (op.kind != OpKind::Copy) return op.device().str() + ".compute";
  const Device& from = op.operands[0]->type.device;
  const Device& to = op.device();
  if (from.isCpu()) return to.str() + ".h2d";
  if (to.isCpu()) return from.str() + ".d2h";
  return to.str() + ".d2d";
}

namespace {

// How far each stream is known to have progressed: stream name -> position of its last op
// that is ordered before the point this clock describes (-1: none).
using VectorClock = std::map<std::string, int64_t>;

void mergeInto(VectorClock& into, const VectorClock& from) {
  for (const auto& [stream, position] : from) {
    auto [it, inserted] = into.emplace(stream, position);
    if (!inserted && it->second < position) it->second = position;
  }
}

int64_t positionIn(const VectorClock& clock, const std::string& stream) {
  auto it = clock.find(stream);
  return it == clock.end() ? -1 : it->second;
}

struct Scheduled {
  std::string stream;
  int64_t position = 0;  // index of the op on its stream
  VectorClock clock;     // what is ordered before this op finishes, itself included
  int64_t recordId = -1;
};

Attrs withoutSchedule(const Attrs& attrs) {
  Attrs result = attrs;
  result.erase("stream");
  result.erase("wait");
  result.erase("record");
  return result;
}

}  // namespace

bool AssignStreamsPass::run(Graph& graph, const PassContext&) const {
  // A fused kernel launches once, when its first member issues: that member waits for what
  // every member reads. The others then find their producers ordered already.
  std::map<const Op*, std::vector<const Value*>> kernelReads;
  for (const KernelSpan& span : kernelSpans(graph)) {
    std::vector<const Value*>& reads = kernelReads[graph.ops()[span.first]];
    for (size_t i = span.first; i <= span.last; ++i)
      for (const Value* operand : graph.ops()[i]->operands)
        if (!operand->producer || kernelOf(*operand->producer) != span.name)
          reads.push_back(operand);  // not a member's: on another stream, or earlier
  }
  std::map<const Op*, Scheduled> scheduled;
  std::map<std::string, VectorClock> streamClocks;  // what each stream's next op follows
  std::map<std::string, int64_t> streamLengths;
  std::map<const Op*, std::vector<int64_t>> waits;
  int64_t nextEvent = 0;
  for (const Op* op : graph.ops()) {
    if (op->kind == OpKind::Param) continue;  // resident before the run: nothing to order
    for (const Value* operand : op->operands)
      GXC_CHECK(op->kind == OpKind::Copy || operand->type.device == op->device(),
                "assign-streams before insert-copies: '{}' reads '{}' across devices",
                op->layerName(), operand->name);
    Scheduled& self = scheduled[op];
    self.stream = streamOf(*op);
    VectorClock& clock = streamClocks[self.stream];
    // Producers not yet ordered before this op's stream: not on it, not reached through an
    // earlier wait, and not ordered before another such producer (whose event covers them).
    std::vector<Scheduled*> pending;
    auto kernel = kernelReads.find(op);
    const std::vector<const Value*> ownReads(op->operands.begin(), op->operands.end());
    for (const Value* operand : kernel == kernelReads.end() ? ownReads : kernel->second) {
      const Op* producer = operand->producer;
      if (!producer || producer->kind == OpKind::Param) continue;
      Scheduled* source = &scheduled.at(producer);
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
      waits[op].push_back(source->recordId);
      mergeInto(clock, source->clock);
    }
    self.position = streamLengths[self.stream]++;
    clock[self.stream] = self.position;
    self.clock = clock;
  }

  bool changed = false;
  for (Op* op : graph.ops()) {
    Attrs attrs = withoutSchedule(op->attrs);
    auto it = scheduled.find(op);
    if (it != scheduled.end()) {
      attrs.set("stream", it->second.stream);
      if (it->second.recordId >= 0) attrs.set("record", it->second.recordId);
      if (waits.count(op)) attrs.set("wait", waits[op]);
    }
    if (!(attrs == op->attrs)) {
      op->attrs = std::move(attrs);
      changed = true;
    }
  }
  return changed;
}

}  // namespace gxc
