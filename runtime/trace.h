// Chrome trace files (chrome://tracing, Perfetto) of a run: one process per device, one lane
// (thread) per stream, one span per op.
//
// What it does: collects complete spans ("ph": "X") and dependency arrows between spans
// (flow events "s"/"f", drawn for event waits), and writes the Trace Event Format JSON with
// process and thread name metadata so lanes read "cuda:0" / "cuda:0.compute".
// Requires: times in microseconds from the start of the run (on `sim`, the cost model's
// clock; on `cuda`, measured); spans added in any order.
// Guarantees: processes and lanes are listed in the order they were declared (or first
// used); the JSON is a single object {"traceEvents": [...], "displayTimeUnit": "ns"} that the
// viewers open as is.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gxc {

struct TraceSpan {
  std::string process;   // the device, as the run names it: "cuda:0"
  std::string lane;      // the stream: "cuda:0.compute"
  std::string name;      // what the span shows: the IR op it came from, "%h = matmul"
  std::string category;  // "gemm", "kernel", "copy"
  double startUs = 0;
  double durationUs = 0;
  nlohmann::json args = nlohmann::json::object();  // shown when the span is selected
};

class ChromeTrace {
 public:
  // Declaring fixes the order of processes and lanes in the viewer and a process's label
  // ("cuda:0 (sim GPU 1)"); undeclared ones are added when a span first uses them.
  void declareProcess(const std::string& process, const std::string& label);
  void declareLane(const std::string& process, const std::string& lane);

  // Returns the span's index, for addFlow.
  size_t addSpan(TraceSpan span);
  // An arrow from the end of span `from` to the start of span `to` (an event wait).
  void addFlow(size_t from, size_t to, const std::string& name);

  const std::vector<TraceSpan>& spans() const { return spans_; }
  nlohmann::json toJson() const;
  std::string str() const;  // toJson(), indented one space per level

 private:
  struct Process {
    int pid;
    std::string label;
    std::map<std::string, int> laneIds;  // lane name -> tid
    std::vector<std::string> laneOrder;
  };
  Process& process(const std::string& name);
  int laneId(const std::string& process, const std::string& lane);

  std::map<std::string, Process> processes_;
  std::vector<std::string> processOrder_;
  std::vector<TraceSpan> spans_;
  std::vector<std::pair<size_t, size_t>> flows_;
  std::vector<std::string> flowNames_;
};

}  // namespace gxc
