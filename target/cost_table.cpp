// The figures of the cost model (cost_model.h), each with where it comes from.
#include "target/cost_model.h"

namespace gxc {

const CostTable& h100SxmCosts() {
  static const CostTable table = {
      // Peak rates: NVIDIA H100 Tensor Core GPU datasheet, SXM5 column: FP32 67 TFLOP/s on
      // the CUDA cores; TF32 989 and BF16/FP16 1,979 TFLOP/s on the tensor cores "with
      // sparsity", half that dense: 494.7 and 989.4. PyTorch keeps f32 matmul off TF32 by
      // default (torch.backends.cuda.matmul.allow_tf32 = False since 1.12), and so does gxc's
      // cuda platform unless GXC_ALLOW_TF32=1 (runtime/cuda/cuda_gemm.h).
      .gemmF32FlopsPerSecond = 67e12,
      .gemmTf32FlopsPerSecond = 494.7e12,
      .gemmF16FlopsPerSecond = 989.4e12,
      // The best a large GEMM reaches: 794.5 of 989 TFLOP/s (80.3%) for BF16 torch.mm on an
      // H100 SXM, the "Maximum Achievable Matmul FLOPS" table of S. Bekman's Machine Learning
      // Engineering (github.com/stas00/ml-engineering, compute/accelerator; best shape
      // M x N x K = 2048 x 2048 x 13312, torch 2.7 + CUDA 12.6). That shape fills every SM, so
      // the fraction here is 80.3% divided by the shape's K share below (13312 / 13568). No
      // comparable H100 table exists for f32 or TF32; the same fraction is used for them.
      // Measured (bench/RESULTS-gpu.md, Nsight Compute): on an H200, which has the H100 SXM's
      // SMs and clocks, cuBLAS runs an f32 4096 x 4096 x 4096 GEMM (no TF32) in 2.72 ms,
      // 50.5 TFLOP/s, 75% of 67; this table gives 54.8. Left as published until an H100
      // itself is measured.
      .gemmPeakFraction = 0.803 * (13312.0 + 256.0) / 13312.0,
      // Why small GEMMs are slower: NVIDIA's "Matrix Multiplication Background User's Guide"
      // (Deep Learning Performance documentation, 2023): cuBLAS splits the output into tiles,
      // one thread block per tile, one block per SM at a time (its tile sizes: 256x128 and
      // 128x128 the most efficient, down to 64x64); a GEMM with fewer tiles than SMs leaves
      // SMs idle ("wave quantization"). gxc counts 128x128 tiles, fractionally, with a
      // skinny side counting as one tile, against the H100 SXM's 132 SMs (datasheet), and
      // ignores partial second waves, so time never drops as a GEMM grows. A block also fills
      // its shared-memory pipeline before its first MMA and drains it after the last. Hopper
      // GEMMs pipeline 4 to 7 stages of K = 64 (CUTLASS 3's sm90 mainloops size the stage
      // count to shared memory); gxc assumes 4, so a block's own K competes with 256 of fill:
      // K / (K + 256). This term is gxc's assumption, not a measurement.
      .gemmTileRows = 128,
      .gemmTileColumns = 128,
      .gemmSms = 132,
      .gemmPipelineDepth = 256,
      .allowTf32 = false,
      // HBM3 peak is 3.35 TB/s (datasheet); streaming kernels (BabelStream triad, large
      // elementwise ops) reach about 90% of it. A GEMM's operands and result cross it at
      // least once, so this is also a GEMM's floor. (An H200, 4.8 TB/s by its datasheet,
      // copied 3.1 TB/s device to device, bytes read plus written: bench/RESULTS-gpu.md.)
      .memoryBytesPerSecond = 3.0e12,
      // Host-side cost of one kernel launch through the CUDA runtime: 2-5 us measured
      // (cudaLaunchKernel of an empty kernel), about 5 us once a framework's dispatch is in.
      .kernelLaunchSeconds = 5e-6,
      // PCIe 5.0 x16 is 64 GB/s raw per direction; CUDA's bandwidthTest from pinned memory
      // measures 35-50 GB/s on H100 hosts. These rates are the DMA's alone: gxc's tensors
      // are pageable, so a copy adds the staging memcpy (simStagedCopySeconds).
      .hostToDevicePinnedBytesPerSecond = 40e9,
      .deviceToHostPinnedBytesPerSecond = 40e9,
      // NVLink 4: 18 links of 25 GB/s each way, 450 GB/s one way in theory (900 GB/s both
      // ways); p2pBandwidthLatencyTest measures about 380 GB/s one way between two H100s.
      .deviceToDeviceBytesPerSecond = 380e9,
      // Fixed cost of a cudaMemcpyAsync: a few microseconds of driver work and DMA setup
      // (bandwidthTest and p2pBandwidthLatencyTest latencies for tiny copies). Every staging
      // chunk is one, and its hand-off between the staging thread and the stream is taken
      // to fit in it.
      .copyLatencySeconds = 5e-6,
      // The host: the machine bench/RESULTS.md was measured on at 58cce48, a 2-core Intel Xeon
      // virtual machine at 2.8 GHz, shared with other builds while measured. The one-thread
      // figures are bench/host_rates_bench's best runs by CPU time (the closest to an idle
      // machine), rounded: a memcpy of 4 MiB chunks into a staging buffer, 8.1 GB/s; gxc's
      // generated relu over 64 MiB, 0.69 GB/s of traffic (the host kernels loop over the CUDA
      // grid one block at a time); a chain of one-element unfused ops, 0.66 us an op. The GEMM
      // rate is OpenBLAS 0.3.21 on both cores for the wide MLP of the host benchmark, about
      // 150 GFLOP/s. gxc's host kernels and each staging memcpy run on one thread, and one
      // core of a large server is about as fast; a server's dozens of cores would run the
      // GEMMs several times faster. These time the ops a schedule leaves on the host and the
      // host side of every copy.
      .hostGemmFlopsPerSecond = 150e9,
      .hostMemoryBytesPerSecond = 0.7e9,
      .hostMemcpyBytesPerSecond = 8e9,
      .hostOpSeconds = 0.7e-6,
  };
  return table;
}

}  // namespace gxc
