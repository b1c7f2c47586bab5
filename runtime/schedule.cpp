#include "runtime/schedule.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include "ir/diagnostic.h"

namespace gxc {
namespace {

std::optional<StreamRole> parseRole(std::string_view text) {
  if (text == "compute") return StreamRole::Compute;
  if (text == "h2d") return StreamRole::HostToDevice;
  if (text == "d2h") return StreamRole::DeviceToHost;
  if (text == "d2d") return StreamRole::DeviceToDevice;
  return std::nullopt;
}

ScheduledStream parseStream(const Op& op, const std::string& name) {
  size_t dot = name.rfind('.');
  GXC_CHECK(dot != std::string::npos, "layer '{}': stream \"{}\" is not DEVICE.ROLE",
            op.layerName(), name);
  auto device = parseDevice(std::string_view(name).substr(0, dot));
  auto role = parseRole(std::string_view(name).substr(dot + 1));
  GXC_CHECK(device && role,
            "layer '{}': stream \"{}\" is not DEVICE.ROLE (roles: compute, h2d, "
            "d2h, d2d)",
            op.layerName(), name);
  return {name, *device, *role};
}

// The stream an op may run on, by the contract in schedule.h.
void checkStreamFits(const Op& op, const ScheduledStream& stream) {
  if (op.kind != OpKind::Copy) {
    GXC_CHECK(stream.role == StreamRole::Compute && stream.device == op.device(),
              "layer '{}' on {} runs on stream \"{}\"", op.layerName(), op.device().str(),
              stream.name);
    return;
  }
  const Device& from = op.operands[0]->type.device;
  const Device& to = op.device();
  StreamRole expected = from.isCpu() ? (to.isCpu() ? StreamRole::Compute : StreamRole::HostToDevice)
                        : to.isCpu() ? StreamRole::DeviceToHost
                                     : StreamRole::DeviceToDevice;
  GXC_CHECK(stream.role == expected && (stream.device == from || stream.device == to),
            "copy '{}' from {} to {} runs on stream \"{}\"", op.layerName(), from.str(), to.str(),
            stream.name);
}

auto streamOrder(const ScheduledStream& s) {
  return std::tuple(s.device.isCpu() ? -1 : s.device.index, static_cast<int>(s.role));
}

}  // namespace

Schedule readSchedule(const Graph& graph) {
  Schedule schedule;
  std::map<std::string, ScheduledStream> streams;
  std::vector<std::string> streamOfOp;
  std::set<int64_t> recorded;
  for (const Op* op : graph.ops()) {
    GXC_CHECK(op->device().placed(), "layer '{}' has no device", op->layerName());
    if (op->kind == OpKind::Param) {
      schedule.params.push_back(op);
      continue;
    }
    std::string name = op->attrs.getString("stream", "");
    GXC_CHECK(!name.empty(), "layer '{}' has no stream: the graph was not scheduled",
              op->layerName());
    ScheduledStream stream = parseStream(*op, name);
    checkStreamFits(*op, stream);
    streams.emplace(name, stream);
    ScheduledOp scheduled{op, 0, op->attrs.getIntList("wait").value_or(std::vector<int64_t>{}),
                          std::nullopt};
    for (int64_t id : scheduled.waits)
      GXC_CHECK(recorded.count(id), "layer '{}' waits for event {}, which no earlier op records",
                op->layerName(), id);
    if (op->attrs.has("record")) {
      scheduled.record = op->attrs.getInt("record", 0);
      recorded.insert(*scheduled.record);
    }
    for (const Value* operand : op->operands) schedule.lastUse[operand] = schedule.ops.size();
    schedule.ops.push_back(std::move(scheduled));
    streamOfOp.push_back(name);
  }
  for (const GraphOutput& output : graph.outputs()) {
    GXC_CHECK(output.value->type.device.isCpu(), "output '{}' is on {}, not on the host",
              output.name, output.value->type.device.str());
    schedule.lastUse[output.value] = schedule.ops.size();
  }
  // Params are resident for the whole run, whatever reads them.
  for (const Op* param : schedule.params) schedule.lastUse.erase(param->result);

  for (auto& [name, stream] : streams) schedule.streams.push_back(stream);
  std::stable_sort(schedule.streams.begin(), schedule.streams.end(),
                   [](const auto& a, const auto& b) { return streamOrder(a) < streamOrder(b); });
  std::map<std::string, size_t> streamIndex;
  for (size_t i = 0; i < schedule.streams.size(); ++i) streamIndex[schedule.streams[i].name] = i;
  for (size_t i = 0; i < schedule.ops.size(); ++i)
    schedule.ops[i].stream = streamIndex.at(streamOfOp[i]);
  schedule.events.assign(recorded.begin(), recorded.end());
  return schedule;
}

bool launchBlockingFromEnvironment() {
  const char* value = std::getenv("GXC_LAUNCH_BLOCKING");
  return value && std::string_view(value) == "1";
}

}  // namespace gxc
