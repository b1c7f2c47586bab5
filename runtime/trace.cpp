#include "runtime/trace.h"

#include "ir/diagnostic.h"

namespace gxc {

ChromeTrace::Process& ChromeTrace::process(const std::string& name) {
  auto it = processes_.find(name);
  if (it != processes_.end()) return it->second;
  processOrder_.push_back(name);
  Process fresh{static_cast<int>(processOrder_.size()), name, {}, {}};
  return processes_.emplace(name, std::move(fresh)).first->second;
}

void ChromeTrace::declareProcess(const std::string& name, const std::string& label) {
  process(name).label = label;
}

int ChromeTrace::laneId(const std::string& processName, const std::string& lane) {
  Process& owner = process(processName);
  auto it = owner.laneIds.find(lane);
  if (it != owner.laneIds.end()) return it->second;
  owner.laneOrder.push_back(lane);
  int tid = static_cast<int>(owner.laneOrder.size());
  owner.laneIds.emplace(lane, tid);
  return tid;
}

void ChromeTrace::declareLane(const std::string& processName, const std::string& lane) {
  laneId(processName, lane);
}

size_t ChromeTrace::addSpan(TraceSpan span) {
  laneId(span.process, span.lane);
  spans_.push_back(std::move(span));
  return spans_.size() - 1;
}

void ChromeTrace::addFlow(size_t from, size_t to, const std::string& name) {
  GXC_CHECK(from < spans_.size() && to < spans_.size(), "trace flow between spans {} and {} of {}",
            from, to, spans_.size());
  flows_.emplace_back(from, to);
  flowNames_.push_back(name);
}

nlohmann::json ChromeTrace::toJson() const {
  using nlohmann::json;
  json events = json::array();
  // Metadata first: names and the order of processes and lanes in the viewer.
  for (const std::string& name : processOrder_) {
    const Process& p = processes_.at(name);
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", p.pid}, {"args", {{"name", p.label}}}});
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", p.pid},
                      {"args", {{"sort_index", p.pid}}}});
    for (const std::string& lane : p.laneOrder) {
      int tid = p.laneIds.at(lane);
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", p.pid},
                        {"tid", tid},
                        {"args", {{"name", lane}}}});
      events.push_back({{"ph", "M"},
                        {"name", "thread_sort_index"},
                        {"pid", p.pid},
                        {"tid", tid},
                        {"args", {{"sort_index", tid}}}});
    }
  }
  auto where = [&](const TraceSpan& span) {
    const Process& p = processes_.at(span.process);
    return std::pair{p.pid, p.laneIds.at(span.lane)};
  };
  for (const TraceSpan& span : spans_) {
    auto [pid, tid] = where(span);
    events.push_back({{"ph", "X"},
                      {"name", span.name},
                      {"cat", span.category},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", span.startUs},
                      {"dur", span.durationUs},
                      {"args", span.args}});
  }
  // Flow events bind to the slice enclosing their timestamp on their lane: the start of the
  // span that records the event and the start of the span that waited for it ("bp": "e").
  for (size_t i = 0; i < flows_.size(); ++i) {
    const TraceSpan& from = spans_[flows_[i].first];
    const TraceSpan& to = spans_[flows_[i].second];
    auto [fromPid, fromTid] = where(from);
    auto [toPid, toTid] = where(to);
    events.push_back({{"ph", "s"},
                      {"name", flowNames_[i]},
                      {"cat", "event"},
                      {"id", i + 1},
                      {"pid", fromPid},
                      {"tid", fromTid},
                      {"ts", from.startUs}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"name", flowNames_[i]},
                      {"cat", "event"},
                      {"id", i + 1},
                      {"pid", toPid},
                      {"tid", toTid},
                      {"ts", to.startUs}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

std::string ChromeTrace::str() const { return toJson().dump(1); }

}  // namespace gxc
