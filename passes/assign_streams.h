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

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "passes/pass.h"

namespace gxc {

class AssignStreamsPass : public Pass {
 public:
  std::string_view name() const override { return "assign-streams"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

// The stream an op runs on: "cuda:0.compute", "cuda:1.d2d", "cpu.compute", ...
std::string streamOf(const Op& op);

// The streams of a walk over ops (assign-streams', batch-transfers', plan-memory's), numbered
// from 0 in order of first use. Each stream is named (streamOf) once, the first time an op of
// it is met; every other op is told apart by what streamOf reads of it, its devices, without
// making a name: at 100,000 ops, naming each op's stream built and hashed a string per op.
class StreamNumbering {
 public:
  // The number of the stream `op` (not a param) runs on.
  int numberOf(const Op& op);
  // The number of the stream named `name`, or -1 where no op met so far runs on it.
  int numberOf(const std::string& name) const;
  const std::string& name(int number) const { return names_.at(static_cast<size_t>(number)); }
  int count() const { return static_cast<int>(names_.size()); }

 private:
  // Whether the op is a copy, then its source's and its own device: all streamOf reads. Two
  // keys may share a stream (a device's d2d stream takes copies from every other device).
  using Key = std::tuple<bool, Device::Kind, int, Device::Kind, int>;
  std::map<Key, int> byKey_;
  std::unordered_map<std::string, int> byName_;
  std::vector<std::string> names_;
};

}  // namespace gxc
