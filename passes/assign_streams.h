// assign-streams: every op gets a stream, and events order work across streams.
//
// Terms: a *stream* runs its ops in IR order; streams run concurrently with each other. Each
// device has a `compute` stream and one copy stream per direction: `h2d` (host to this
// device), `d2h` (this device to the host) and `d2d` (another device to this one); the host
// has `cpu.compute`. An *event* is recorded by an op when it finishes (`record = N`) and
// waited for by an op before it starts (`wait = [N]`).
//
// Phases: (1) each op's stream follows from its device and, for copies, the direction;
// (2) walking the ops in order with a vector clock per stream (how far into every other
// stream it is already ordered after), an op waits for an earlier op on another stream only
// when its stream is not already ordered after that op, directly or through another event.
// The earlier ops an op must follow are (a) the producers of what it reads, and (b) where
// plan-memory placed its result at an `offset` in its device's arena, every earlier access
// of those bytes: the readers of the values that had them before (write after read) and
// their writer (write after write). A reader on another stream may still be running when the
// next tenant's writer starts; (b) is that order, made static, as PyTorch's record_stream
// makes it at run time. plan-memory reuses bytes only where (a) already gives that order, so
// on its plans (b) adds nothing; it matters for offsets planned otherwise (IR written by hand,
// a plan edited since), which it makes safe at the price of concurrency. Only the last writer
// of a range and the readers since are kept per byte: the earlier ones are ordered before that
// writer already. So events appear only where an order crosses streams, and none is
// redundant.
//
// Requires: every operand on its op's device (after insert-copies); plan-memory's offsets
//   where memory was planned (a value without one shares bytes with nothing).
// Guarantees: every op but params has `stream`; the waits order every producer before its
//   consumers, and every access of a value's arena bytes before the writer of any later value
//   placed over them; event ids are numbered from 0 in the order they are first needed. The
//   members of a fused kernel share their device's compute stream, only its first member
//   waits (for every event the kernel needs: it launches as one), and only its last may record.
// Idempotent: yes (it recomputes the schedule from scratch and changes nothing if equal).
#pragma once

#include <tuple>

#include "passes/pass.h"

namespace gxc {

class AssignStreamsPass : public Pass {
 public:
  std::string_view name() const override { return "assign-streams"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

// The stream an op runs on: "cuda:0.compute", "cuda:1.d2d", "cpu.compute", ...
std::string streamOf(const Op& op);
// What streamOf reads of an op, so that a walk over many ops names each stream once: ops with
// equal keys run on one stream.
using StreamKey = std::tuple<bool, Device::Kind, int, Device::Kind, int>;
StreamKey streamKeyOf(const Op& op);

}  // namespace gxc
