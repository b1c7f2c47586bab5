// plan-memory: liveness-based buffer reuse per device; each device's peak is known before
// anything is allocated, and a plan that does not fit is refused with a report. The executors
// place every activation at the offset planned here (runtime/memory_plan.h), so the plan is
// what runs.
//
// Terms: a *buffer* is the memory of one value on its device, its size rounded up to 512 bytes
// as the caching allocator rounds requests. *Resident* buffers live for the whole run, outside
// the plan's arena: params (uploaded once, kept by the platform's allocator) and graph inputs
// (provided by the caller). Every other buffer, an *activation*, lives in its device's *arena*,
// one block per device that the executor reserves once; a buffer's *offset* is its first byte
// in it, and the arena's size is the highest end of any activation. *Time* is the op order: op
// i runs at step i of n. An activation is *live* from the step that defines it to the step of
// its last use (inclusive, so an op's result never shares memory with its operands); a graph
// output stays live to step n, after the last op. A copy's result is a buffer on its
// destination. A fused kernel (ir/fused_kernel.h) keeps its inner values in registers: only its
// root's result is a buffer, live from the kernel's first step, as the kernel writes it while
// it reads its operands. A *view* (a lone reshape, or slice along axis 0: ir/kernel_steps.h) is
// no buffer: it is its operand's bytes (from the slice's first row on), so its readers keep
// the viewed buffer live; a view of a resident value is resident too.
//
// Streams: the ops run on the streams assign-streams will give them (streamOf), concurrently,
// ordered only by stream order and by the waits for what they read. A buffer whose lifetime
// has ended in program order may still be read on another stream while a later op writes;
// so a later buffer takes its bytes only when, besides the lifetimes not overlapping, the
// later buffer's writer is already ordered after every access of the earlier one by those
// dependencies (plan_memory_streams.h). Reuse then costs no wait between streams, where a
// program-order plan would make assign-streams serialize independent streams (a pipeline's
// next micro-batch behind the previous one's transfer); the price is memory, as PyTorch's
// record_stream pays it at run time. assign-streams still orders any reuse it finds unordered.
//
// Phases (plan_memory.cpp, plan_memory_packing.cpp):
//   1. Liveness: one walk over the ops gives every buffer its first and last step, and every
//      view the buffer it sees and where.
//   2. Packing, per device, of the activations: *greedy by size with best fit*: in order of
//      decreasing size, each buffer takes the smallest gap, among the buffers already placed
//      that it may not share bytes with (lifetimes that overlap, or a reuse the streams do not
//      order), that holds it, or else goes on top of them. This is
//      TFLite's ArenaPlanner (tensors sorted by size, SimpleMemoryArena::Allocate picks the
//      best-fitting gap) and XLA's GlobalDecreasingSizeBestFitHeap; Pisarchyk and Lee
//      ("Efficient Memory Management for Deep Neural Net Inference", 2020) find it within a
//      few percent of the lower bound (the most bytes live at one step) on common networks.
//      Large buffers first, because they set the peak and are the hardest to fit; best fit
//      rather than first fit, because it keeps the larger holes for the later buffers whose
//      lifetimes the smaller holes do not cover. Conflicting buffers are found through
//      interval trees (one per stream writing the device, with each buffer's lifetime
//      stretched until that stream is ordered after it), so planning stays close to linear in
//      the number of ops on chain-like graphs.
//   3. Check: a device whose resident bytes plus arena exceed its memory is refused, naming
//      it, the bytes needed and available, and its largest tensors; every such device in one
//      line.
//   4. Record: the offsets, arenas and peaks become attributes.
// Only types are read, never parameter data, so a model with 16 GB of weights plans at once.
//
// Requires: every value typed and placed (after infer-shapes and assign-devices); placed
//   after insert-copies, it sees the copy buffers too. The op order is the execution order;
//   fused kernels, where fuse made them, keep the rules of ir/fused_kernel.h.
// Guarantees: every op whose result is an activation has `offset` (bytes into its device's
//   arena: a multiple of 512, plus a view's byte offset for a view), and no other op has one
//   (params, views of resident values, a kernel's inner members); activations live at one step
//   on one device never share a byte, and an activation takes bytes of an earlier one only
//   when its writer's stream is ordered after every access of the earlier one by stream order
//   and the waits for what ops read; a view lies inside the buffer it sees; the graph has
//   `arena_DEVICE` (the arena's bytes, maybe 0) and `peak_DEVICE` (resident bytes plus arena)
//   for every device that holds a value (ir/memory_attrs.h); with the target's memory known,
//   every device fits its memory or the pass throws a model error (exit 1) and changes
//   nothing.
// Idempotent: yes; the plan is a function of the op order and types, which it does not touch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/memory_attrs.h"
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
  bool resident = false;  // a param or graph input: outside the arena, no offset
  int64_t bytes = 0;      // the value's size
  int64_t rounded = 0;    // its size in memory: bytes rounded up to kPlanAlignmentBytes
  int64_t offset = 0;     // into the arena; 0 for a resident buffer
  int64_t firstStep = 0;  // live over [firstStep, lastStep], both inclusive
  int64_t lastStep = 0;
};

// A view and the buffer whose bytes it is.
struct PlannedView {
  const Value* value = nullptr;
  const Value* base = nullptr;  // the value of the buffer it sees
  int64_t offset = 0;           // its first byte: into the arena, or into a resident base
};

struct DevicePlan {
  Device device;
  std::vector<PlannedBuffer> buffers;  // graph inputs, then op results, in IR order
  std::vector<PlannedView> views;      // in IR order
  int64_t residentBytes = 0;           // the resident buffers, each rounded
  int64_t arenaBytes = 0;              // the arena: the highest end of an activation
  int64_t peakBytes = 0;               // residentBytes + arenaBytes
};

// The plan of every device that holds a value, cpu first, then cuda:0, cuda:1, ...
std::vector<DevicePlan> planMemory(const Graph& graph);

}  // namespace gxc
