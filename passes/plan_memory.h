// plan-memory: liveness-based buffer reuse per device; each device's peak is known before
// anything is allocated, and a plan that does not fit is refused with a report.
//
// Terms: a *buffer* is the memory of one value on its device (an op's result, a graph input),
// its size rounded up to 512 bytes as the caching allocator rounds requests. *Time* is the op
// order: op i runs at step i of n. A buffer is *live* from the step that defines it to the
// step of its last use (inclusive, so an op's result never shares memory with its operands);
// a graph output stays live to step n, after the last op. *Resident* buffers are live for the
// whole run: params (uploaded before it starts) and graph inputs (provided by the caller). A
// copy's result is a buffer on its destination. A fused kernel (ir/fused_kernel.h) keeps its
// inner values in registers: only its root's result is a buffer, live from the kernel's first
// step, as the kernel writes it while it reads its operands. Each device has one *arena*; a
// buffer's *offset* is its first byte in it, and the device's *peak* is the arena's size.
//
// Phases (plan_memory.cpp, plan_memory_packing.cpp):
//   1. Liveness: one walk over the ops gives every buffer its first and last step.
//   2. Packing, per device: resident buffers are stacked at the bottom of the arena in IR
//      order (they overlap every other buffer, so nothing could share their bytes anyway, and
//      stacking them first is never worse than mixing them in). The others are placed by
//      *greedy by size with best fit*: in order of decreasing size, each buffer takes the
//      smallest gap, among the buffers already placed whose lifetimes overlap its own, that
//      holds it, or else goes on top of them. This is TFLite's ArenaPlanner (tensors sorted
//      by size, SimpleMemoryArena::Allocate picks the best-fitting gap) and XLA's
//      GlobalDecreasingSizeBestFitHeap; Pisarchyk and Lee ("Efficient Memory Management for
//      Deep Neural Net Inference", 2020) find it within a few percent of the lower bound (the
//      most bytes live at one step) on common networks. Large buffers first, because they set
//      the peak and are the hardest to fit; best fit rather than first fit, because it keeps
//      the larger holes for the later buffers whose lifetimes the smaller holes do not cover.
//      Overlapping buffers are found through an interval tree, so planning stays close to
//      linear in the number of ops on chain-like graphs.
//   3. Check: a device whose peak exceeds its memory is refused, naming it, the bytes needed
//      and available, and its largest tensors; every such device in one line.
//   4. Record: the offsets and peaks become attributes.
// Only types are read, never parameter data, so a model with 16 GB of weights plans at once.
//
// Requires: every value typed and placed (after infer-shapes and assign-devices); placed
//   after insert-copies, it sees the copy buffers too. The op order is the execution order;
//   fused kernels, where fuse made them, keep the rules of ir/fused_kernel.h.
// Guarantees: every op but a kernel's inner members has `offset` (a multiple of 512, bytes
//   into its device's arena), and those have none;
//   buffers live at one step on one device never share a byte; the graph has `peak_DEVICE`
//   (`peak_cpu`, `peak_cuda0`: ':' does not lex in an attribute name) for every device that
//   holds a value, the bytes of its arena; with the target's memory known, every
//   device fits its memory or the pass throws a model error (exit 1) and changes nothing.
// Idempotent: yes; the plan is a function of the op order and types, which it does not touch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace gxc {

class PlanMemoryPass : public Pass {
 public:
  std::string_view name() const override { return "plan-memory"; }
  bool run(Graph& graph, const PassContext& context) const override;
};

inline constexpr int64_t kPlanAlignmentBytes = 512;

struct PlannedBuffer {
  const Value* value = nullptr;
  int64_t bytes = 0;    // the value's size
  int64_t rounded = 0;  // its size in the arena: bytes rounded up to kPlanAlignmentBytes
  int64_t offset = 0;
  int64_t firstStep = 0;  // live over [firstStep, lastStep], both inclusive
  int64_t lastStep = 0;
};

struct DevicePlan {
  Device device;
  std::vector<PlannedBuffer> buffers;  // graph inputs, then op results, in IR order
  int64_t peakBytes = 0;
};

// The plan of every device that holds a value, cpu first, then cuda:0, cuda:1, ...
std::vector<DevicePlan> planMemory(const Graph& graph);

// The graph attribute holding a device's peak: "peak_cpu", "peak_cuda0".
std::string peakAttrName(const Device& device);

}  // namespace gxc
