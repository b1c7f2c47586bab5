// The cost model of a device kind: how long an op or a copy would take on an H100 SXM (and on
// the host beside it). Passes ask it (auto placement, the pipeline cut, batch-transfers' size
// limit); the `sim` platform charges its clock by it.
//
// What it does: turns an op or a copy into seconds, from one table of figures whose sources
// are given next to them in cost_table.cpp:
//   - a GEMM takes the longer of its math and its memory traffic, plus a launch: its flops at
//     the peak rate of its dtype (tensor cores for f16/bf16, and for f32 when TF32 is allowed)
//     times an efficiency that grows with its shape (gemmEfficiency), and its operands and
//     result once over HBM;
//   - a pool also does one operation per window element (poolFlops), at the CUDA cores' f32
//     rate on a GPU, overlapping its traffic; on the host each is a load of its window;
//   - any other kernel moves its bytes at the memory rate, plus a launch; on a GPU a reshape
//     or a slice of whole rows is a view (no kernel, no time), on the host a copy of its result;
//   - on the host, a GEMM is the host GEMM library's flops (and a fused epilogue its result
//     read and written by a generated kernel), any other kernel its bytes at the generated
//     kernels' rate, and every op pays a fixed dispatch cost instead of a launch;
//   - a copy between the host and a GPU costs what the runtimes' staging does: the host side
//     of every gxc tensor is pageable, so each chunk is a host memcpy into (or out of) one of
//     two pinned buffers and a DMA, chunk i+1's memcpy overlapping chunk i's DMA
//     (simStagedCopySeconds); a copy between GPUs is one NVLink transfer.
// Requires: ops whose types are inferred (dtype and shape known).
// Guarantees: costs are deterministic, positive and monotone in size (a GEMM's in each of M,
// N and K; gemmEfficiency too); every kernel pays a launch and every copy a fixed latency per
// DMA, so n small copies cost more than one copy of their total size.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "ir/kernel_steps.h"

namespace gxc {

struct CostTable {
  // GEMM math, peak rates per dtype (dense, no sparsity).
  double gemmF32FlopsPerSecond;   // f32 on the CUDA cores (PyTorch's and gxc's default)
  double gemmTf32FlopsPerSecond;  // f32 on the tensor cores, when TF32 is allowed
  double gemmF16FlopsPerSecond;   // f16 and bf16 on the tensor cores
  // The best fraction of peak cuBLAS reaches on a large GEMM, and the shape terms that take a
  // smaller GEMM below it (gemmEfficiency).
  double gemmPeakFraction;
  double gemmTileRows;  // rows and columns of the output block one SM computes
  double gemmTileColumns;
  double gemmSms;            // blocks that run at once: one per SM
  double gemmPipelineDepth;  // the K an SM spends filling its pipeline before the first MMA
  bool allowTf32 = false;    // GXC_ALLOW_TF32=1: f32 GEMMs at the TF32 rate

  double memoryBytesPerSecond;              // HBM traffic of every kernel (a GEMM's floor too)
  double kernelLaunchSeconds;               // fixed cost of every kernel on a GPU
  double hostToDevicePinnedBytesPerSecond;  // one DMA from pinned host memory
  double deviceToHostPinnedBytesPerSecond;  // one DMA to pinned host memory
  double deviceToDeviceBytesPerSecond;      // peer copy over NVLink, one direction
  double copyLatencySeconds;                // fixed cost of every DMA (setup, driver)

  // The host (cpu.compute, the staging threads), figures measured by bench/host_rates_bench.
  double hostGemmFlopsPerSecond;    // f32 GEMMs, all cores
  double hostMemoryBytesPerSecond;  // a generated kernel, one thread
  double hostMemcpyBytesPerSecond;  // one thread copying into (or out of) a staging buffer
  double hostOpSeconds;             // fixed cost of every op on the host (dispatch, allocation)
};

// The figures of one H100 SXM5 80 GB on a PCIe 5 host; the sources are in cost_table.cpp.
const CostTable& h100SxmCosts();

// The chunk of the runtimes' double-buffered staging: each host<->device copy stream has two
// pinned buffers of this size (runtime/sim/sim_staging.h, runtime/cuda/cuda_staging.h).
constexpr int64_t kStagingChunkBytes = int64_t{4} << 20;

enum class CopyDirection { HostToHost, HostToDevice, DeviceToHost, DeviceToDevice };
enum class HostMemory { Pinned, Pageable };

CopyDirection copyDirection(const Device& from, const Device& to);

// The shape of a GEMM op (matmul, linear): `batch` independent [m, k] x [k, n] products.
struct GemmShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};
GemmShape gemmShape(const Op& op);

// Floating-point operations of a GEMM op (matmul, linear): 2 per multiply-add; 0 otherwise.
double gemmFlops(const Op& op);
// scaled_dot_product_attention's two products, 2 * rows * S * (E + Ev); 0 for other ops.
double attentionFlops(const Op& op);
// FLOPs of a conv2d: 2 * N * Cout * Hout * Wout * Cin / groups * kh * kw, plus the bias; 0
// for any other op.
double convFlops(const Op& op);
// The window elements of a max_pool2d, avg_pool2d or adaptive_avg_pool2d, one operation each
// (a compare or an add; padding not counted); 0 for any other op.
double poolFlops(const Op& op);
// Bytes an op reads and writes: every operand once plus its result.
int64_t opTrafficBytes(const Op& op);

// The fraction of its dtype's peak a GEMM of `shape` reaches: gemmPeakFraction, times the
// fraction of SMs its output blocks keep busy, times the share of each block's time spent on
// its own K (not filling the pipeline). In (0, gemmPeakFraction], non-decreasing in m, n, k
// and batch; cost_table.cpp gives the sources.
double gemmEfficiency(const GemmShape& shape, const CostTable& costs);
// The peak GEMM rate of `dtype` on a GPU (f32: CUDA cores, or tensor cores with allowTf32).
double gemmPeakFlopsPerSecond(DType dtype, const CostTable& costs);
// Seconds of a GEMM's math on a GPU: 2 m n k batch flops at its dtype's peak times
// gemmEfficiency (its memory traffic, which may take longer, aside).
double gemmComputeSeconds(const GemmShape& shape, DType dtype, const CostTable& costs);

// Seconds `op` (not a copy, not a param) takes on `device`, as the header says.
double simOpSeconds(const Op& op, const Device& device, const CostTable& costs = h100SxmCosts());

// A fused kernel (ir/kernel_steps.h: a step of two ops or more) is ONE kernel: its
// flops are its members' summed (a GEMM's; its epilogue is cuBLASLt's, free), its traffic the
// values it reads from outside, each once, plus its result: its inner values stay in
// registers and never touch memory.
double kernelFlops(const KernelStep& step);
int64_t kernelTrafficBytes(const KernelStep& step);
// Seconds `step` (not a copy, not a param) takes on `device`: a lone op as simOpSeconds says;
// a fused kernel as one op of kernelTrafficBytes whose GEMM member (if any) sets its math,
// with one launch on a GPU (one dispatch on the host).
double simStepSeconds(const KernelStep& step, const Device& device,
                      const CostTable& costs = h100SxmCosts());

// Seconds one copy of `bytes` takes as the runtimes perform it. Between the host and a GPU:
// from pinned host memory one DMA (latency plus bytes over the pinned bandwidth); from
// pageable host memory (every gxc tensor) the staged pipeline of simStagedCopySeconds with
// kStagingChunkBytes. Between GPUs one NVLink copy; on the host one memcpy.
double simCopySeconds(CopyDirection direction, int64_t bytes, HostMemory hostMemory,
                      const CostTable& costs = h100SxmCosts());

// A host<->device copy of a pageable host tensor through two pinned buffers of `chunkBytes`,
// as the runtimes' staging runs it: chunk i is a host memcpy (hostMemcpyBytesPerSecond) and a
// DMA (copyLatencySeconds plus its bytes over the pinned bandwidth); toward the GPU the memcpy
// of chunk i comes first, toward the host the DMA. A memcpy waits for the previous memcpy and
// for the DMA that last used its buffer (chunk i-2); a DMA waits for the previous DMA and its
// own chunk's memcpy. So the copy takes its first leg, then per further chunk the longer of
// the two legs in flight, then its last leg. Device-to-device and host copies are one piece
// (simCopySeconds).
double simStagedCopySeconds(CopyDirection direction, int64_t bytes, int64_t chunkBytes,
                            const CostTable& costs = h100SxmCosts());

}  // namespace gxc
