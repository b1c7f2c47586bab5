// assign-devices: every value gets a device of the run, by manual placement.
//
// Terms: a value's *annotation* is the device the model asked for (the frontend resolved it
// through the layer's own `device`, its groups and `default_device`); `?` means none.
//
// Requires: every value typed (after infer-shapes).
// First, with the run's memory known, params that need more than all its devices have
// together are refused in plan-memory's form (passes/run_capacity.h), before any device is
// resolved: that is the real problem, whatever the annotations say.
// Guarantees: every graph input, param and op result sits on a device of the run: `cpu` or
//   `cuda:i` with i below the run's GPU count.
//   - device follows data: an unannotated layer that reads the result of a `to`, or of a
//     layer placed by this rule, runs on the `to`'s device (its first such operand's), as
//     in PyTorch the layers after x.cuda(0) run on cuda:0; this is part of the model's
//     placement, so auto placement takes it as a constraint;
//   - any other unannotated layer runs on the run's first device;
//   - an unannotated param goes where its first consumer runs, and every other device that
//     consumes it gets a replica (`%W.cuda1 = param {name = "W", ...}`: the same tensor, so
//     loaded or initialized identically); an annotated param stays on its device;
//   - on a run with no GPU every cuda:N means the host, said once in a note (unless the
//     driver already said so: context.hostFallbackNoted); with --strict that fallback is an
//     error naming the layer;
//   - on a run with GPUs, cuda:N beyond the run's list is an error naming the layer and the
//     devices the run has.
// With placement "auto", the layers the model leaves free are placed first by a memory-aware
// list scheduler (passes/auto_placement.h); the rules above then apply to its choices.
// --explain (context.explain) gets one line per layer: the device and why.
// Idempotent: yes.
#pragma once

#include "passes/pass.h"

namespace gxc {

class AssignDevicesPass : public Pass {
 public:
  std::string_view name() const override { return "assign-devices"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

}  // namespace gxc
