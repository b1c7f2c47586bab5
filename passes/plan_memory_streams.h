// plan-memory's view of the streams the ops will run on (passes/assign_streams.h names them):
// which ops the dependencies alone order after which, so that bytes are reused only by a
// writer already ordered after every access of their previous tenant, and the plan adds no
// wait between streams.
//
// Terms: ops run on their streams in program order; a step (ir/kernel_steps.h) starts when its
// first member starts, after the producers of everything it reads (assign-streams' waits), and
// its accesses are done when its root is. An op is *ordered after* another when a chain of
// stream order and such dependencies leads from the other to it: what the vector clocks of
// assign-streams compute, before it adds any wait for reused bytes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/kernel_steps.h"
#include "passes/assign_streams.h"

namespace gxc {

class StreamOrder {
 public:
  StreamOrder(const Graph& graph, const KernelSteps& steps);

  // The stream `op` runs on.
  const std::string& streamOf(const Op* op) const;
  // The index (in graph.ops()) of the first op on `stream` that starts a step and is ordered
  // after every op of `accesses` (non-param ops); graph.ops().size() if there is none.
  int64_t firstOrderedAfter(const std::string& stream,
                            const std::vector<const Op*>& accesses) const;

 private:
  struct Placed {
    size_t stream = 0;
    int64_t position = 0;  // from 1 on its stream
    size_t opIndex = 0;    // in graph.ops()
  };
  struct Start {  // an op that starts a step, with how far it is ordered after every stream
    int64_t opIndex = 0;
    std::vector<int64_t> clock;
  };

  StreamNumbering streams_;
  std::unordered_map<const Op*, Placed> placed_;
  std::vector<std::vector<Start>> starts_;  // by stream, in order
  int64_t end_ = 0;
};

}  // namespace gxc
