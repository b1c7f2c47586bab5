#include "passes/plan_memory_streams.h"

#include <algorithm>

#include "passes/assign_streams.h"

namespace gxc {

StreamOrder::StreamOrder(const Graph& graph, const KernelSteps& steps)
    : end_(static_cast<int64_t>(graph.ops().size())) {
  for (const Op* op : graph.ops()) {
    if (op->kind == OpKind::Param) continue;
    std::string stream = gxc::streamOf(*op);
    if (streamIndex_.emplace(stream, streams_.size()).second) streams_.push_back(stream);
  }
  size_t count = streams_.size();
  starts_.resize(count);
  // What each stream's next op is ordered after, and each op's clock once it is done.
  std::vector<std::vector<int64_t>> streamClock(count, std::vector<int64_t>(count, 0));
  std::unordered_map<const Op*, std::vector<int64_t>> doneClock;
  for (size_t i = 0; i < graph.ops().size(); ++i) {
    const Op* op = graph.ops()[i];
    if (op->kind == OpKind::Param) continue;
    size_t stream = streamIndex_.at(gxc::streamOf(*op));
    std::vector<int64_t>& clock = streamClock[stream];
    const KernelStep& step = steps.stepOf(op);
    if (op == step.first()) {
      for (const Value* input : step.inputs) {
        if (!input->producer || input->producer->kind == OpKind::Param) continue;
        const std::vector<int64_t>& producer = doneClock.at(input->producer);
        for (size_t s = 0; s < count; ++s) clock[s] = std::max(clock[s], producer[s]);
      }
      starts_[stream].push_back({static_cast<int64_t>(i), clock});
    }
    placed_[op] = {stream, ++clock[stream]};
    doneClock[op] = clock;
  }
}

const std::string& StreamOrder::streamOf(const Op* op) const {
  return streams_.at(placed_.at(op).stream);
}

int64_t StreamOrder::firstOrderedAfter(const std::string& stream,
                                       const std::vector<const Op*>& accesses) const {
  auto found = streamIndex_.find(stream);
  if (found == streamIndex_.end()) return end_;
  const std::vector<Start>& starts = starts_[found->second];
  // Clocks only grow along a stream: the first start that has reached each access, by binary
  // search; the latest of those has reached them all.
  size_t first = 0;
  for (const Op* access : accesses) {
    const Placed& at = placed_.at(access);
    auto reached = std::partition_point(starts.begin(), starts.end(), [&](const Start& start) {
      return start.clock[at.stream] < at.position;
    });
    first = std::max(first, static_cast<size_t>(reached - starts.begin()));
  }
  return first < starts.size() ? starts[first].opIndex : end_;
}

}  // namespace gxc
