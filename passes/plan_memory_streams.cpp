#include "passes/plan_memory_streams.h"

#include <algorithm>

namespace gxc {

StreamOrder::StreamOrder(const Graph& graph, const KernelSteps& steps)
    : end_(static_cast<int64_t>(graph.ops().size())) {
  const auto& ops = graph.ops();
  // Each op's stream, by number in order of first use.
  std::vector<size_t> streamOfOp(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i]->kind != OpKind::Param)
      streamOfOp[i] = static_cast<size_t>(streams_.numberOf(*ops[i]));
  size_t count = static_cast<size_t>(streams_.count());
  starts_.resize(count);
  // What each stream's next op is ordered after, and each op's clock once it is done (by op
  // index, `count` entries each).
  std::vector<std::vector<int64_t>> streamClock(count, std::vector<int64_t>(count, 0));
  std::vector<int64_t> doneClock(ops.size() * count, 0);
  placed_.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op* op = ops[i];
    if (op->kind == OpKind::Param) continue;
    size_t stream = streamOfOp[i];
    std::vector<int64_t>& clock = streamClock[stream];
    const KernelStep& step = steps.stepOf(op);
    if (op == step.first()) {
      for (const Value* input : step.inputs) {
        if (!input->producer || input->producer->kind == OpKind::Param) continue;
        const int64_t* producer = &doneClock[placed_.at(input->producer).opIndex * count];
        for (size_t s = 0; s < count; ++s) clock[s] = std::max(clock[s], producer[s]);
      }
      starts_[stream].push_back({static_cast<int64_t>(i), clock});
    }
    placed_[op] = {stream, ++clock[stream], i};
    std::copy(clock.begin(), clock.end(),
              doneClock.begin() + static_cast<std::ptrdiff_t>(i * count));
  }
}

const std::string& StreamOrder::streamOf(const Op* op) const {
  return streams_.name(static_cast<int>(placed_.at(op).stream));
}

int64_t StreamOrder::firstOrderedAfter(const std::string& stream,
                                       const std::vector<const Op*>& accesses) const {
  const int number = streams_.numberOf(stream);
  if (number < 0) return end_;
  const std::vector<Start>& starts = starts_[static_cast<size_t>(number)];
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
