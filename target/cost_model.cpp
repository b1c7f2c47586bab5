#include "target/cost_model.h"

#include <algorithm>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"
#include "ir/fused_kernel.h"
#include "ir/pool_geometry.h"

namespace gxc {

CopyDirection copyDirection(const Device& from, const Device& to) {
  GXC_CHECK(from.placed() && to.placed(), "copy between unplaced devices {} and {}", from.str(),
            to.str());
  if (from.isCpu()) return to.isCpu() ? CopyDirection::HostToHost : CopyDirection::HostToDevice;
  return to.isCpu() ? CopyDirection::DeviceToHost : CopyDirection::DeviceToDevice;
}

GemmShape gemmShape(const Op& op) {
  if (op.kind == OpKind::Matmul) {
    // result [batch, m, n] or [m, n]; the contraction over a's columns (its rows when
    // transposed).
    const Shape& a = op.operands[0]->type.shape;
    const Shape& result = op.result->type.shape;
    GXC_CHECK(a.size() >= 2 && result.size() >= 2, "layer '{}': matmul of rank {}", op.layerName(),
              a.size());
    GemmShape shape;
    shape.k = op.attrs.getBool("transpose_a", false) ? a[a.size() - 2] : a.back();
    shape.m = result[result.size() - 2];
    shape.n = result.back();
    shape.batch = result.size() == 3 ? result[0] : 1;
    if (isRowStackedMatmul(op)) {  // run as one GEMM over the stacked rows
      shape.m *= shape.batch;
      shape.batch = 1;
    }
    return shape;
  }
  GXC_CHECK(op.kind == OpKind::Linear, "layer '{}': gemmShape of a {} op", op.layerName(),
            opName(op.kind));
  // x [..., in] times weight [out, in] transposed: every row of x is a row of one GEMM.
  GemmShape shape;
  shape.k = op.operands[1]->type.shape.back();
  shape.n = op.operands[1]->type.shape.front();
  shape.m = shape.n > 0 ? op.result->type.numel() / shape.n : 0;
  return shape;
}

double gemmFlops(const Op& op) {
  if (op.kind != OpKind::Matmul && op.kind != OpKind::Linear) return 0;
  GemmShape shape = gemmShape(op);
  double products = static_cast<double>(shape.batch) * static_cast<double>(shape.m) *
                    static_cast<double>(shape.n);
  double flops = 2.0 * products * static_cast<double>(shape.k);
  if (op.kind == OpKind::Linear && op.operands.size() == 3) flops += products;  // the bias
  return flops;
}

double attentionFlops(const Op& op) {
  if (op.kind != OpKind::ScaledDotProductAttention) return 0;
  const Shape &q = op.operands[0]->type.shape, &k = op.operands[1]->type.shape;
  const Shape& v = op.operands[2]->type.shape;
  size_t rank = q.size();
  double rows = static_cast<double>(checkedNumel(q).value()) / std::max<int64_t>(q.back(), 1);
  double keys = static_cast<double>(k[rank - 2]);
  return 2.0 * rows * keys * static_cast<double>(q.back() + v.back());
}

double convFlops(const Op& op) {
  if (op.kind != OpKind::Conv2d && op.kind != OpKind::ConvTranspose2d) return 0;
  const bool transposed = op.kind == OpKind::ConvTranspose2d;
  ConvGeometry g = transposed ? convTranspose2dGeometry(op) : conv2dGeometry(op);
  double outputs = static_cast<double>(g.batch) * static_cast<double>(g.outChannels) *
                   static_cast<double>(g.outH) * static_cast<double>(g.outW);
  double kernel = static_cast<double>(g.kernelH) * static_cast<double>(g.kernelW);
  // A conv2d's output sums in/groups * kh * kw products. A transposed one scatters each input
  // pixel through the kernel into out/groups channels: as many products per input as that.
  double products = transposed ? static_cast<double>(g.batch) * static_cast<double>(g.inChannels) *
                                     static_cast<double>(g.inH) * static_cast<double>(g.inW) *
                                     static_cast<double>(g.outChannels / g.groups) * kernel
                               : outputs * static_cast<double>(g.inChannels / g.groups) * kernel;
  return 2.0 * products + (g.bias ? outputs : 0.0);
}

double poolFlops(const Op& op) {
  if (isPool2dBackward(op.kind)) {
    // Each input element gathers from the windows that hold it; max_pool2d's recomputes
    // each of those windows' argmax: its forward's reads once per window that overlaps.
    const PoolGeometry g = pool2dGeometry(op);
    const double windows = static_cast<double>(((g.kernelH + g.strideH - 1) / g.strideH) *
                                               ((g.kernelW + g.strideW - 1) / g.strideW));
    const double inputs = static_cast<double>(op.result->type.numel());
    return op.kind == OpKind::MaxPool2dBackward ? windows * pool2dWindowElements(g)
                                                : windows * inputs;
  }
  if (!isPool2d(op.kind)) return 0;
  return pool2dWindowElements(pool2dGeometry(op));
}

int64_t opTrafficBytes(const Op& op) {
  int64_t bytes = op.result->type.bytes();
  for (const Value* operand : op.operands) bytes += operand->type.bytes();
  return bytes;
}

double gemmEfficiency(const GemmShape& shape, const CostTable& costs) {
  // Output tiles, a skinny side counting as one: how many SMs the GEMM keeps busy (one wave
  // at most; later waves are taken as full).
  double tiles = static_cast<double>(shape.batch) *
                 std::max(1.0, static_cast<double>(shape.m) / costs.gemmTileRows) *
                 std::max(1.0, static_cast<double>(shape.n) / costs.gemmTileColumns);
  double busySms = std::min(1.0, tiles / costs.gemmSms);
  double k = static_cast<double>(shape.k);
  double ownK = k / (k + costs.gemmPipelineDepth);
  return costs.gemmPeakFraction * busySms * ownK;
}

double gemmComputeSeconds(const GemmShape& shape, DType dtype, const CostTable& costs) {
  // 2mnk / (peak * efficiency), rearranged so that rounding keeps it monotone: below one wave
  // the GEMM takes as long as the SMs' worth of full tiles would, and k / ownK = k + depth.
  double m = static_cast<double>(shape.m), n = static_cast<double>(shape.n);
  double k = static_cast<double>(shape.k);
  if (shape.batch == 0 || m == 0 || n == 0 || k == 0) return 0;
  double products = static_cast<double>(shape.batch) * m * n;
  double oneWave =
      costs.gemmSms * std::min(m, costs.gemmTileRows) * std::min(n, costs.gemmTileColumns);
  return 2 * (k + costs.gemmPipelineDepth) * std::max(products, oneWave) /
         (gemmPeakFlopsPerSecond(dtype, costs) * costs.gemmPeakFraction);
}

double gemmPeakFlopsPerSecond(DType dtype, const CostTable& costs) {
  switch (dtype) {
    case DType::F16:
    case DType::BF16:
      return costs.gemmF16FlopsPerSecond;
    case DType::F32:
      return costs.allowTf32 ? costs.gemmTf32FlopsPerSecond : costs.gemmF32FlopsPerSecond;
    default:
      // f64 (DGEMM): a data-center GPU's f64 tensor-core rate is about its f32 CUDA-core rate.
      return costs.gemmF32FlopsPerSecond;
  }
}

namespace {

// q @ k^T [rows, L, S] over E, then the weights @ v [rows, L, Ev] over S: attention's math,
// priced as the two GEMMs that a FlashAttention kernel runs on the tensor cores. gxc's kernel
// (codegen/cuda_source_attention.cpp) is not tiled that way yet, so on a GPU this is what the
// op should cost, not what today's kernel would.
double attentionMathSeconds(const Op& op, const Device& device, const CostTable& costs) {
  const Shape &q = op.operands[0]->type.shape, &k = op.operands[1]->type.shape;
  const Shape& v = op.operands[2]->type.shape;
  size_t rank = q.size();
  int64_t queries = q[rank - 2], width = q[rank - 1], keys = k[rank - 2];
  int64_t batch = width == 0 || queries == 0 ? 0 : checkedNumel(q).value() / (queries * width);
  GemmShape scores{batch, queries, keys, width};
  GemmShape weighted{batch, queries, v.back(), keys};
  DType dtype = op.result->type.dtype;
  if (!device.isCuda()) return (attentionFlops(op)) / costs.hostGemmFlopsPerSecond;
  return gemmComputeSeconds(scores, dtype, costs) + gemmComputeSeconds(weighted, dtype, costs);
}

// Seconds of GEMM math of the GEMM members of `ops` on `device`.
double gemmMathSeconds(const std::vector<const Op*>& ops, const Device& device,
                       const CostTable& costs) {
  double seconds = 0;
  for (const Op* op : ops) {
    if (op->kind == OpKind::ScaledDotProductAttention) {
      seconds += attentionMathSeconds(*op, device, costs);
      continue;
    }
    double flops = gemmFlops(*op) + convFlops(*op);
    if (flops <= 0) continue;
    if (!device.isCuda()) {
      // A convolution on the host is oneDNN's, priced as the BLAS's GEMMs are.
      seconds += flops / costs.hostGemmFlopsPerSecond;
      continue;
    }
    if (op->kind == OpKind::Conv2d || op->kind == OpKind::ConvTranspose2d) {
      seconds +=
          flops / (gemmPeakFlopsPerSecond(op->result->type.dtype, costs) * costs.gemmPeakFraction);
      continue;
    }
    seconds += gemmComputeSeconds(gemmShape(*op), op->result->type.dtype, costs);
  }
  return seconds;
}

// One kernel of `ops` (one op, or a fused kernel's members) moving `bytes`, plus its fixed
// cost. On a GPU the longer of its GEMM math and its memory traffic. On the host a GEMM is
// the host library's (its math alone) followed, when fused, by a pass that reads and writes the
// GEMM's result: its generated epilogue kernel's cost, an upper bound where oneDNN applies the
// epilogue as post-ops (f32); any other kernel is gxc's generated code moving its bytes.
double kernelSeconds(const std::vector<const Op*>& ops, int64_t bytes, const Device& device,
                     const CostTable& costs) {
  double math = gemmMathSeconds(ops, device, costs);
  // A pool's window elements (poolFlops), a compare or an add each: on a GPU math on the CUDA
  // cores that overlaps the traffic; on the host a load each of the one-thread generated
  // kernel, priced as its bytes are. Pools are never fused, so no GEMM shares their kernel.
  double windowFlops = 0, windowBytes = 0;
  for (const Op* op : ops) {
    double flops = poolFlops(*op);
    windowFlops += flops;
    windowBytes += flops * static_cast<double>(dtypeSize(op->operands[0]->type.dtype));
  }
  if (device.isCuda())
    return std::max(math + windowFlops / costs.gemmF32FlopsPerSecond,
                    static_cast<double>(bytes) / costs.memoryBytesPerSecond) +
           costs.kernelLaunchSeconds;
  double generatedBytes = static_cast<double>(bytes) + windowBytes;
  if (math > 0)
    generatedBytes =
        ops.size() > 1 ? 2.0 * static_cast<double>(ops.back()->result->type.bytes()) : 0.0;
  return math + generatedBytes / costs.hostMemoryBytesPerSecond + costs.hostOpSeconds;
}

bool isRowView(const Op& op) { return stepKindOf(op) == StepKind::View; }

}  // namespace

double simOpSeconds(const Op& op, const Device& device, const CostTable& costs) {
  GXC_CHECK(op.kind != OpKind::Param && op.kind != OpKind::Copy,
            "layer '{}': simOpSeconds of a {} op", op.layerName(), opName(op.kind));
  // A reshape (squeeze, unsqueeze, flatten), and a slice of whole rows, are views of contiguous
  // memory on every platform (as torch.Tensor.view and narrow(0, ...) are; ir/kernel_steps.h,
  // StepKind::View): no kernel, no copy, no time. A slice along another axis is materialized, a
  // kernel that copies its bytes, priced as one below.
  if (isRowView(op)) return 0;
  return kernelSeconds({&op}, opTrafficBytes(op), device, costs);
}

double kernelFlops(const KernelStep& step) {
  double flops = 0;
  for (const Op* op : step.ops) flops += gemmFlops(*op) + attentionFlops(*op) + convFlops(*op);
  return flops;
}

int64_t kernelTrafficBytes(const KernelStep& step) {
  int64_t bytes = step.root()->result->type.bytes();
  for (const Value* input : step.inputs) bytes += input->type.bytes();
  return bytes;
}

double simStepSeconds(const KernelStep& step, const Device& device, const CostTable& costs) {
  if (step.ops.size() == 1) return simOpSeconds(*step.root(), device, costs);
  return kernelSeconds(step.ops, kernelTrafficBytes(step), device, costs);
}

double simCopySeconds(CopyDirection direction, int64_t bytes, HostMemory hostMemory,
                      const CostTable& costs) {
  double seconds = static_cast<double>(bytes);
  switch (direction) {
    case CopyDirection::HostToHost:
      return seconds / costs.hostMemcpyBytesPerSecond;  // a memcpy: no driver, no DMA
    case CopyDirection::DeviceToDevice:
      return costs.copyLatencySeconds + seconds / costs.deviceToDeviceBytesPerSecond;
    case CopyDirection::HostToDevice:
    case CopyDirection::DeviceToHost:
      break;
  }
  if (hostMemory == HostMemory::Pageable)
    return simStagedCopySeconds(direction, bytes, kStagingChunkBytes, costs);
  double bandwidth = direction == CopyDirection::HostToDevice
                         ? costs.hostToDevicePinnedBytesPerSecond
                         : costs.deviceToHostPinnedBytesPerSecond;
  return costs.copyLatencySeconds + seconds / bandwidth;
}

double simStagedCopySeconds(CopyDirection direction, int64_t bytes, int64_t chunkBytes,
                            const CostTable& costs) {
  bool toDevice = direction == CopyDirection::HostToDevice;
  if (!toDevice && direction != CopyDirection::DeviceToHost)
    return simCopySeconds(direction, bytes, HostMemory::Pinned, costs);
  GXC_CHECK(chunkBytes > 0, "staging chunk of {} bytes", chunkBytes);
  // The two legs of a chunk: toward the GPU the memcpy into the buffer comes first, then the
  // DMA out of it; toward the host the DMA into the buffer, then the memcpy out. An empty copy
  // is still one DMA.
  auto memcpySeconds = [&](int64_t chunk) {
    return static_cast<double>(chunk) / costs.hostMemcpyBytesPerSecond;
  };
  auto dmaSeconds = [&](int64_t chunk) {
    return simCopySeconds(direction, chunk, HostMemory::Pinned, costs);
  };
  int64_t chunks = std::max<int64_t>(1, (bytes + chunkBytes - 1) / chunkBytes);
  double firstEnd = 0;           // the previous chunk's first leg
  double secondEnd[2] = {0, 0};  // the last second leg that used each buffer
  double lastSecondEnd = 0;
  for (int64_t i = 0; i < chunks; ++i) {
    int64_t chunk = std::min(chunkBytes, bytes - i * chunkBytes);
    double first = toDevice ? memcpySeconds(chunk) : dmaSeconds(chunk);
    double second = toDevice ? dmaSeconds(chunk) : memcpySeconds(chunk);
    // The first leg refills buffer i % 2: it waits for the second leg of chunk i - 2.
    firstEnd = std::max(firstEnd, secondEnd[i % 2]) + first;
    lastSecondEnd = std::max(lastSecondEnd, firstEnd) + second;
    secondEnd[i % 2] = lastSecondEnd;
  }
  return lastSecondEnd;
}

}  // namespace gxc
