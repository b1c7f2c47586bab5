#include "runtime/sim/sim_run_state.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "ir/printer.h"

namespace gxc {

namespace {

constexpr double kMicrosecondsPerSecond = 1e6;

// The length of the union of `spans`, each [start, end): spans that overlap or touch merge
// into one, whose length is its end minus its start (so back-to-back ops add no rounding).
double unionLength(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double length = 0;
  for (size_t i = 0; i < spans.size();) {
    double start = spans[i].first, end = spans[i].second;
    for (++i; i < spans.size() && spans[i].first <= end; ++i) end = std::max(end, spans[i].second);
    length += end - start;
  }
  return length;
}

}  // namespace

SimExecutor::RunState::RunState(const Schedule& schedule, const std::vector<int>& deviceMap)
    : streamClock(schedule.streams.size(), 0.0), spans(deviceMap.size() + 1) {
  devices.emplace_back().device = "cpu";
  trace.declareProcess("cpu", "cpu (host)");
  for (size_t i = 0; i < deviceMap.size(); ++i) {
    std::string name = Device::cuda(static_cast<int>(i)).str();
    SimDeviceReport& gpu = devices.emplace_back();
    gpu.device = name;
    gpu.virtualGpu = deviceMap[i];
    trace.declareProcess(name, fmt::format("{} (sim GPU {})", name, deviceMap[i]));
  }
  for (const ScheduledStream& stream : schedule.streams)
    trace.declareLane(stream.device.str(), stream.name);
}

SimDeviceReport& SimExecutor::RunState::device(const Device& device) {
  size_t index = device.isCpu() ? 0 : static_cast<size_t>(device.index) + 1;
  GXC_CHECK(device.placed() && index < devices.size(), "no report for device {}", device.str());
  return devices[index];
}

void SimExecutor::RunState::account(const Schedule& schedule, size_t index, double startSeconds,
                                    double seconds, const KernelStep& step) {
  const ScheduledOp& scheduled = schedule.ops[index];
  const Op& op = *scheduled.op;
  const ScheduledStream& stream = schedule.streams[scheduled.stream];
  double end = startSeconds + seconds;

  SimDeviceReport& runsOn = device(stream.device);
  if (seconds > 0)
    spans[static_cast<size_t>(&runsOn - devices.data())].emplace_back(startSeconds, end);
  runsOn.finishMs = std::max(runsOn.finishMs, end * 1e3);

  TraceSpan span;
  span.process = stream.device.str();
  span.lane = stream.name;
  bool fused = step.ops.size() > 1;
  std::vector<std::string> kinds;
  for (const Op* member : step.ops) kinds.emplace_back(opName(member->kind));
  // "%attn = k0 (mul, softmax)": the kernel's result, name and members.
  span.name =
      fused ? fmt::format("%{} = {} ({})", op.result->name, step.kernelAttr, fmt::join(kinds, ", "))
            : fmt::format("%{} = {}", op.result->name, opName(op.kind));
  span.startUs = startSeconds * kMicrosecondsPerSecond;
  span.durationUs = seconds * kMicrosecondsPerSecond;
  span.args["op"] = printOp(op);
  span.args["layer"] = op.layerName();
  if (fused) {
    span.args["kernel"] = step.kernelAttr;
    std::vector<std::string> members;
    for (const Op* member : step.ops) members.push_back(printOp(*member));
    span.args["members"] = members;
  }
  if (op.kind == OpKind::Copy) {
    const Device& from = op.operands[0]->type.device;
    int64_t bytes = op.result->type.bytes();
    span.category = "copy";
    span.args["bytes"] = bytes;
    span.args["from"] = from.str();
    span.args["to"] = op.device().str();
    device(from).bytesCopiedOut += bytes;
    device(from).copiesOut += 1;
    device(op.device()).bytesCopiedIn += bytes;
    device(op.device()).copiesIn += 1;
  } else {
    double flops = kernelFlops(step);
    span.category = flops > 0 ? "gemm" : "kernel";
    if (flops > 0)
      span.args["flops"] = flops;
    else
      span.args["bytes"] = fused ? kernelTrafficBytes(step) : opTrafficBytes(op);
    runsOn.kernels += 1;
  }
  if (!kernelWaits.empty()) span.args["wait"] = kernelWaits;
  if (scheduled.record) span.args["record"] = *scheduled.record;

  size_t spanIndex = trace.addSpan(std::move(span));
  for (int64_t event : kernelWaits)
    trace.addFlow(eventSpan.at(event), spanIndex, fmt::format("event {}", event));
  if (scheduled.record) eventSpan[*scheduled.record] = spanIndex;
}

void SimExecutor::RunState::fillReport(SimRunReport& report, const SimExecutor& executor) {
  report.totalMs = 0;
  for (size_t i = 0; i < devices.size(); ++i) devices[i].busyMs = unionLength(spans[i]) * 1e3;
  for (SimDeviceReport& entry : devices) {
    Device which = entry.virtualGpu < 0 ? Device::cpu() : *parseDevice(entry.device);
    entry.memory = executor.allocatorFor(which).stats();
    auto uploaded = executor.paramUploadBytes_.find(entry.device);
    if (uploaded != executor.paramUploadBytes_.end()) entry.uploadedBytes += uploaded->second;
    report.totalMs = std::max(report.totalMs, entry.finishMs);
  }
  report.devices = std::move(devices);
  report.trace = std::move(trace);
}

}  // namespace gxc
