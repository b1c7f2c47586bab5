// The pass interface: a name and run(Graph&, const PassContext&). No state survives runs.
//
// run() returns whether it changed the graph. User errors (a model that cannot be compiled
// for these devices) are thrown as gxc::Error carrying the layer's location; broken
// invariants as gxc::InternalError through GXC_CHECK.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace gxc {

struct PassContext {
  // The run's devices in order: entry i of `--devices` is cuda:i. A host-only run is {cpu}.
  std::vector<Device> devices = {Device::cpu()};
  bool strict = false;  // --strict: edges and fallbacks the model did not ask for are errors
  // Memory of each device of `devices`, in bytes; 0 means unlimited (the host). Empty when
  // the run does not say (gxc-opt without --sim-gpus): nothing is then refused for size.
  std::vector<int64_t> deviceMemoryBytes;
  // --placement: "manual", "auto", "data-parallel" or "pipeline"; --microbatches for pipeline.
  std::string placement = "manual";
  int microbatches = 0;
  // One-line notes for the user (stderr in the drivers); may be empty.
  std::function<void(const std::string&)> note;
  // --explain: assign-devices says, one line per layer, the device chosen and why.
  std::function<void(const std::string&)> explain;

  int gpuCount() const;
  void emitNote(const std::string& text) const {
    if (note) note(text);
  }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual bool run(Graph& graph, const PassContext& context) const = 0;
};

}  // namespace gxc
