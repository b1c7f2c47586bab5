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
#include "target/target.h"

namespace gxc {

struct PassContext {
  // The run's devices in order (entry i of `--devices` is cuda:i; a host-only run is {cpu}),
  // the memory a plan may use on each, and the cost model that prices work there.
  Target target;
  bool strict = false;  // --strict: edges and fallbacks the model did not ask for are errors
  // --placement: "manual", "auto", "data-parallel" or "pipeline"; --microbatches for pipeline.
  std::string placement = "manual";
  int microbatches = 0;
  // replicate-update's gradient buckets under data-parallel training, at most this many bytes
  // each (gxc train --bucket-mb; DDP's bucket_cap_mb, 25 MB by default).
  int64_t bucketBytes = 25 * 1024 * 1024;
  // One-line notes for the user (stderr in the drivers); may be empty.
  std::function<void(const std::string&)> note;
  // The driver already said that this run is on the host because it found no GPU, which
  // covers what the model places on cuda: assign-devices' fallback note would say it twice.
  bool hostFallbackNoted = false;
  // --explain: assign-devices says, one line per layer, the device chosen and why.
  std::function<void(const std::string&)> explain;

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
