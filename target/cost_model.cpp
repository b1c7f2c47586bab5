#include "target/cost_model.h"

#include <algorithm>

#include "ir/diagnostic.h"

namespace gxc {

const CostTable& h100SxmCosts() {
  static const CostTable table = {
      // NVIDIA's H100 SXM5 datasheet gives 67 TFLOP/s of FP32 (non-tensor-core) peak; cuBLAS
      // SGEMM on large square f32 matrices measures about 50 TFLOP/s. PyTorch keeps f32 matmul
      // off TF32 by default (allow_tf32 = False since 1.12), so this is the rate it sees.
      .gemmFlopsPerSecond = 50e12,
      // HBM3 peak is 3.35 TB/s (datasheet); streaming kernels (BabelStream triad, large
      // elementwise ops) reach about 90% of it.
      .memoryBytesPerSecond = 3.0e12,
      // Host-side cost of one kernel launch through the CUDA runtime: 2-5 us measured
      // (cudaLaunchKernel of an empty kernel), about 5 us once a framework's dispatch is in.
      .kernelLaunchSeconds = 5e-6,
      // PCIe 5.0 x16 is 64 GB/s raw per direction; CUDA's bandwidthTest from pinned memory
      // measures 35-50 GB/s on H100 hosts. From pageable memory the driver copies through its
      // own staging buffer first, and about 10 GB/s is typical.
      .hostToDevicePinnedBytesPerSecond = 40e9,
      .hostToDevicePageableBytesPerSecond = 10e9,
      .deviceToHostPinnedBytesPerSecond = 40e9,
      .deviceToHostPageableBytesPerSecond = 10e9,
      // NVLink 4: 18 links of 25 GB/s each way, 450 GB/s one way in theory (900 GB/s both
      // ways); p2pBandwidthLatencyTest measures about 380 GB/s one way between two H100s.
      .deviceToDeviceBytesPerSecond = 380e9,
      // Fixed cost of a cudaMemcpyAsync: a few microseconds of driver work and DMA setup
      // (bandwidthTest and p2pBandwidthLatencyTest latencies for tiny copies).
      .copyLatencySeconds = 5e-6,
      // Host figures only time ops a schedule leaves on the host. Rough: a dual-socket server
      // running OpenBLAS SGEMM with AVX-512 reaches about 1 TFLOP/s; DDR5 streams about
      // 100 GB/s across sockets, a single-threaded memcpy about 10 GB/s.
      .hostGemmFlopsPerSecond = 1e12,
      .hostMemoryBytesPerSecond = 100e9,
      .hostMemcpyBytesPerSecond = 10e9,
  };
  return table;
}

CopyDirection copyDirection(const Device& from, const Device& to) {
  GXC_CHECK(from.placed() && to.placed(), "copy between unplaced devices {} and {}", from.str(),
            to.str());
  if (from.isCpu()) return to.isCpu() ? CopyDirection::HostToHost : CopyDirection::HostToDevice;
  return to.isCpu() ? CopyDirection::DeviceToHost : CopyDirection::DeviceToDevice;
}

double gemmFlops(const Op& op) {
  if (op.kind == OpKind::Matmul) {
    // result [..., M, N], contraction over a's columns (its rows when transposed).
    const Shape& a = op.operands[0]->type.shape;
    GXC_CHECK(a.size() >= 2, "layer '{}': matmul operand of rank {}", op.layerName(), a.size());
    int64_t k = op.attrs.getBool("transpose_a", false) ? a[a.size() - 2] : a.back();
    return 2.0 * static_cast<double>(op.result->type.numel()) * static_cast<double>(k);
  }
  if (op.kind == OpKind::Linear) {
    int64_t in = op.operands[1]->type.shape.back();
    double flops = 2.0 * static_cast<double>(op.result->type.numel()) * static_cast<double>(in);
    if (op.operands.size() == 3) flops += static_cast<double>(op.result->type.numel());
    return flops;
  }
  return 0;
}

int64_t opTrafficBytes(const Op& op) {
  int64_t bytes = op.result->type.bytes();
  for (const Value* operand : op.operands) bytes += operand->type.bytes();
  return bytes;
}

namespace {

// One kernel of `flops` (a GEMM's) or else `bytes` of memory traffic on `device`.
double kernelSeconds(double flops, int64_t bytes, const Device& device, const CostTable& costs) {
  bool gpu = device.isCuda();
  double seconds;
  if (flops > 0)
    seconds = flops / (gpu ? costs.gemmFlopsPerSecond : costs.hostGemmFlopsPerSecond);
  else
    seconds = static_cast<double>(bytes) /
              (gpu ? costs.memoryBytesPerSecond : costs.hostMemoryBytesPerSecond);
  return seconds + (gpu ? costs.kernelLaunchSeconds : 0.0);
}

}  // namespace

double simOpSeconds(const Op& op, const Device& device, const CostTable& costs) {
  GXC_CHECK(op.kind != OpKind::Param && op.kind != OpKind::Copy,
            "layer '{}': simOpSeconds of a {} op", op.layerName(), opName(op.kind));
  // A reshape, and a slice of whole rows, are views of contiguous memory on a GPU (as
  // torch.Tensor.view and narrow(0, ...) are): no kernel, no time. The host still computes
  // them as copies, which is only how sim keeps its data.
  if (op.kind == OpKind::Reshape) return 0;
  if (op.kind == OpKind::Slice && op.attrs.getInt("axis", 0) == 0) return 0;
  return kernelSeconds(gemmFlops(op), opTrafficBytes(op), device, costs);
}

double kernelFlops(const KernelStep& step) {
  double flops = 0;
  for (const Op* op : step.ops) flops += gemmFlops(*op);
  return flops;
}

int64_t kernelTrafficBytes(const KernelStep& step) {
  int64_t bytes = step.root()->result->type.bytes();
  for (const Value* input : step.inputs) bytes += input->type.bytes();
  return bytes;
}

double simStepSeconds(const KernelStep& step, const Device& device, const CostTable& costs) {
  if (step.ops.size() == 1) return simOpSeconds(*step.root(), device, costs);
  return kernelSeconds(kernelFlops(step), kernelTrafficBytes(step), device, costs);
}

double simCopySeconds(CopyDirection direction, int64_t bytes, HostMemory hostMemory,
                      const CostTable& costs) {
  bool pinned = hostMemory == HostMemory::Pinned;
  double bandwidth = 0;
  switch (direction) {
    case CopyDirection::HostToHost:
      bandwidth = costs.hostMemcpyBytesPerSecond;
      break;
    case CopyDirection::HostToDevice:
      bandwidth = pinned ? costs.hostToDevicePinnedBytesPerSecond
                         : costs.hostToDevicePageableBytesPerSecond;
      break;
    case CopyDirection::DeviceToHost:
      bandwidth = pinned ? costs.deviceToHostPinnedBytesPerSecond
                         : costs.deviceToHostPageableBytesPerSecond;
      break;
    case CopyDirection::DeviceToDevice:
      bandwidth = costs.deviceToDeviceBytesPerSecond;
      break;
  }
  // A host-to-host memcpy pays no driver latency.
  double latency = direction == CopyDirection::HostToHost ? 0.0 : costs.copyLatencySeconds;
  return latency + static_cast<double>(bytes) / bandwidth;
}

double simStagedCopySeconds(CopyDirection direction, int64_t bytes, int64_t chunkBytes,
                            const CostTable& costs) {
  bool staged =
      direction == CopyDirection::HostToDevice || direction == CopyDirection::DeviceToHost;
  if (!staged) return simCopySeconds(direction, bytes, HostMemory::Pageable, costs);
  GXC_CHECK(chunkBytes > 0, "staging chunk of {} bytes", chunkBytes);
  // Every chunk is its own DMA, so it pays its own latency; an empty copy is still one. The
  // host memcpy between the tensor and the staging buffer is taken to overlap the previous
  // chunk's DMA (double buffering), so only the pinned DMA rate shows.
  int64_t fullChunks = bytes / chunkBytes;
  int64_t rest = bytes % chunkBytes;
  double seconds = static_cast<double>(fullChunks) *
                   simCopySeconds(direction, chunkBytes, HostMemory::Pinned, costs);
  if (rest > 0 || fullChunks == 0)
    seconds += simCopySeconds(direction, rest, HostMemory::Pinned, costs);
  return seconds;
}

}  // namespace gxc
