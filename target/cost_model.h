// The cost model of a device kind: how long an op or a copy would take on an H100 SXM (and on
// the host beside it). Passes ask it (auto placement, the pipeline cut, batch-transfers' size
// limit); the `sim` platform charges its clock by it.
//
// What it does: turns an op (its flops or the bytes it moves) or a copy (its bytes, its
// direction, whether the host side is pinned) into seconds, from one table of figures whose
// sources are given next to them in cost_model.cpp.
// Requires: ops whose types are inferred (dtype and shape known).
// Guarantees: costs are deterministic, positive and monotone in size; every kernel pays a
// launch and every copy a fixed latency, so n small copies cost more than one copy of their
// total size (latency + bytes / bandwidth, summed).
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "ir/kernel_steps.h"

namespace gxc {

struct CostTable {
  double gemmFlopsPerSecond;    // f32 GEMM (matmul, linear)
  double memoryBytesPerSecond;  // HBM traffic of elementwise ops, reductions, movement
  double kernelLaunchSeconds;   // fixed cost of every kernel
  double hostToDevicePinnedBytesPerSecond;
  double hostToDevicePageableBytesPerSecond;
  double deviceToHostPinnedBytesPerSecond;
  double deviceToHostPageableBytesPerSecond;
  double deviceToDeviceBytesPerSecond;  // peer copy over NVLink, one direction
  double copyLatencySeconds;            // fixed cost of every copy (DMA setup, driver)
  // Ops the schedule leaves on the host ("cpu.compute") are timed with these.
  double hostGemmFlopsPerSecond;
  double hostMemoryBytesPerSecond;
  double hostMemcpyBytesPerSecond;  // host-to-host copies
};

// The figures of one H100 SXM5 80 GB on a PCIe 5 host; the sources are in the .cpp.
const CostTable& h100SxmCosts();

enum class CopyDirection { HostToHost, HostToDevice, DeviceToHost, DeviceToDevice };
enum class HostMemory { Pinned, Pageable };

CopyDirection copyDirection(const Device& from, const Device& to);

// Floating-point operations of a GEMM op (matmul, linear): 2 per multiply-add; 0 otherwise.
double gemmFlops(const Op& op);
// Bytes an op reads and writes: every operand once plus its result.
int64_t opTrafficBytes(const Op& op);

// Seconds `op` (not a copy, not a param) takes on `device`: a GEMM at the GEMM rate, anything
// else at the memory rate, plus one kernel launch on a GPU; views (a reshape, a slice of whole
// rows) take none.
double simOpSeconds(const Op& op, const Device& device, const CostTable& costs = h100SxmCosts());

// A fused kernel (ir/kernel_steps.h: a step of two ops or more) is ONE kernel: its
// flops are its members' summed (a GEMM's; its epilogue is cuBLASLt's, free), its traffic the
// values it reads from outside, each once, plus its result: its inner values stay in
// registers and never touch memory.
double kernelFlops(const KernelStep& step);
int64_t kernelTrafficBytes(const KernelStep& step);
// Seconds `step` (not a copy, not a param) takes on `device`: a lone op as simOpSeconds says;
// a fused kernel as one op of kernelFlops and kernelTrafficBytes, with one launch on a GPU.
double simStepSeconds(const KernelStep& step, const Device& device,
                      const CostTable& costs = h100SxmCosts());

// Seconds one copy of `bytes` takes: the fixed latency plus bytes over the bandwidth of its
// direction (host memory pinned or pageable matters only when the host is one side).
double simCopySeconds(CopyDirection direction, int64_t bytes, HostMemory hostMemory,
                      const CostTable& costs = h100SxmCosts());

// A host<->device copy staged through a pinned buffer of `chunkBytes`: one DMA (latency plus
// bytes over the pinned bandwidth) per chunk. Device-to-device and host copies are one piece.
double simStagedCopySeconds(CopyDirection direction, int64_t bytes, int64_t chunkBytes,
                            const CostTable& costs = h100SxmCosts());

}  // namespace gxc
