// Reading a scheduled graph (after assign-streams) into what an executor needs: its streams,
// each op's stream, the events it waits for and records, and when each value dies. Shared by
// the platforms that run streams (`sim`, `cuda`) and by `gxc compile --emit plan`. With the
// memory plan (runtime/memory_plan.h), checkArenaReuseOrdered proves the schedule race-free on
// the arenas: streams share an arena's bytes only in the order the events impose.
//
// What it does: collects the streams named by the ops' `stream` attributes ("cuda:0.h2d":
// device, then role), in the order devices and roles sort, and checks the schedule contract.
// Requires: a verified, placed, scheduled graph: every op but `param` carries `stream`; a
// compute op runs on its device's compute stream; a copy runs on the h2d (host to device),
// d2h (device to host) or d2d (device to device) stream of one of its two devices; every
// waited event was recorded by an earlier op; every output lives on the host; for
// checkArenaReuseOrdered, every reuse of arena bytes ordered after the accesses of their
// previous tenant (assign-streams sees to it).
// Guarantees: a broken contract is reported as a gxc bug (GXC_CHECK), since the passes
// produce schedules; nothing about the run's devices is checked here (the executor checks those).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/kernel_steps.h"
#include "runtime/memory_plan.h"

namespace gxc {

enum class StreamRole { Compute, HostToDevice, DeviceToHost, DeviceToDevice };

struct ScheduledStream {
  std::string name;  // "cuda:0.compute"
  Device device;
  StreamRole role;
};

struct ScheduledOp {
  const Op* op;
  size_t stream;  // index into Schedule::streams
  std::vector<int64_t> waits;
  std::optional<int64_t> record;
};

struct Schedule {
  std::vector<ScheduledStream> streams;  // cpu first, then cuda:0, ...; per device by role
  std::vector<ScheduledOp> ops;          // every op but params, in program (issue) order
  std::vector<const Op*> params;
  std::vector<int64_t> events;  // every event id recorded, ascending
  // Index into `ops` of a value's last reader; ops.size() for outputs (alive to the end).
  // A value nothing reads is absent.
  std::map<const Value*, size_t> lastUse;
};

Schedule readSchedule(const Graph& graph);

// Checks that the schedule orders every access of the arenas' bytes as program order does,
// through stream order and events: each read of an activation after the write of the value
// that holds those bytes, and each write after every earlier read and write of its bytes (the
// bytes' previous tenants, plan-memory's reuse). A step accesses its bytes when its root runs.
// An access left unordered is a race the streams could lose, and a gxc bug (assign-streams
// orders them): GXC_CHECK names both ops and the bytes.
void checkArenaReuseOrdered(const Schedule& schedule, const MemoryPlan& plan,
                            const KernelSteps& steps);

// Whether GXC_LAUNCH_BLOCKING=1 is set in the environment: the platforms that run streams
// then complete every op before issuing the next (as CUDA_LAUNCH_BLOCKING=1 does).
bool launchBlockingFromEnvironment();

}  // namespace gxc
