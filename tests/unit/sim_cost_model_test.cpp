// The H100 cost model of the sim platform: exact figures for simple cases, the floors the
// model must never go under (HBM for a GEMM's weight, the host memcpy for a pageable copy),
// monotonicity, and the orderings a placement decision relies on (bigger costs more, pinned
// beats pageable, NVLink beats PCIe, many small copies cost more than one large one).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "ir/parser.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr double kHbmPeakBytesPerSecond = 3.35e12;  // the H100 SXM datasheet's

std::unique_ptr<Graph> costGraph() {
  return parseGraph(R"(graph @costs(%a: f32[1000,200] @cuda:0, %b: f32[200,8] @cuda:0,
                                    %big: f32[4096,4096] @cuda:0, %v: f32[1048576] @cuda:0,
                                    %c: f32[1000,200] @cpu, %d: f32[200,8] @cpu,
                                    %act: f32[8,8192] @cuda:0, %w: f32[8192,8192] @cuda:0,
                                    %hb: bf16[4096,4096] @cuda:0, %rows: f32[4096,1024] @cpu,
                                    %grows: f32[4096,1024] @cuda:0) -> (y) {
  %mm = matmul %a, %b : f32[1000,8] @cuda:0
  %mmt = matmul %a, %a {transpose_a = true} : f32[200,200] @cuda:0
  %sq = matmul %big, %big : f32[4096,4096] @cuda:0
  %sqh = matmul %hb, %hb : bf16[4096,4096] @cuda:0
  %skinny = matmul %act, %w : f32[8,8192] @cuda:0
  %r = relu %v : f32[1048576] @cuda:0
  %s = add %v, %v : f32[1048576] @cuda:0
  %host = matmul %c, %d : f32[1000,8] @cpu
  %half = slice %rows {axis = 0, start = 0, end = 2048} : f32[2048,1024] @cpu
  %flat = reshape %rows {shape = [-1]} : f32[4194304] @cpu
  %ghalf = slice %grows {axis = 0, start = 0, end = 2048} : f32[2048,1024] @cuda:0
  %cols = slice %rows {axis = 1, start = 0, end = 512} : f32[4096,512] @cpu
  %y = copy %mm : f32[1000,8] @cuda:0 -> @cpu
  return %y
})",
                    "costs.gxir");
}

const Op& opNamed(const Graph& graph, const std::string& name) {
  return *graph.find(name)->producer;
}

// Seconds of `m` x `k` times `k` x `n` in `dtype` on cuda:0.
double gemmSeconds(int64_t m, int64_t n, int64_t k, const char* dtype = "f32",
                   const CostTable& costs = h100SxmCosts()) {
  auto graph = parseGraph(
      fmt::format(R"(graph @g(%a: {0}[{1},{3}] @cuda:0, %b: {0}[{3},{2}] @cuda:0) -> (c) {{
  %c = matmul %a, %b : {0}[{1},{2}] @cuda:0
  return %c
}})",
                  dtype, m, n, k),
      "gemm.gxir");
  return simOpSeconds(opNamed(*graph, "c"), Device::cuda(0), costs);
}

TEST(SimCostModelTest, AGemmNeverBeatsHbmDeliveringItsOperands) {
  // The issue's case: [8,8192] x [8192,8192] f32. Its 256 MiB weight alone needs 80 us of
  // HBM3 at the datasheet's peak; at 50 TFLOP/s flat it was charged 26.5 us.
  auto graph = costGraph();
  const Op& skinny = opNamed(*graph, "skinny");
  double weightBytes = 8192.0 * 8192 * 4;
  double seconds = simOpSeconds(skinny, Device::cuda(0));
  EXPECT_GE(seconds, weightBytes / kHbmPeakBytesPerSecond);
  EXPECT_GT(seconds, 80e-6);
  // It is memory bound: its traffic at the streaming rate, plus the launch.
  const CostTable& costs = h100SxmCosts();
  EXPECT_DOUBLE_EQ(seconds,
                   static_cast<double>(opTrafficBytes(skinny)) / costs.memoryBytesPerSecond +
                       costs.kernelLaunchSeconds);
}

TEST(SimCostModelTest, LargeGemmsRunAtTheMeasuredFractionOfTheirDtypesPeak) {
  const CostTable& costs = h100SxmCosts();
  // The shape that measured 794.5 TFLOP/s in bf16 (80.3% of 989) reaches that here.
  GemmShape best{1, 2048, 2048, 13312};
  EXPECT_NEAR(gemmEfficiency(best, costs), 0.803, 1e-9);
  // f32 on the CUDA cores, bf16 on the tensor cores: 4096^3 is compute bound in both, and the
  // rates differ by the datasheet's ratio.
  auto graph = costGraph();
  double f32 = simOpSeconds(opNamed(*graph, "sq"), Device::cuda(0)) - costs.kernelLaunchSeconds;
  double bf16 = simOpSeconds(opNamed(*graph, "sqh"), Device::cuda(0)) - costs.kernelLaunchSeconds;
  double flops = 2.0 * 4096 * 4096 * 4096;
  double efficiency = gemmEfficiency({1, 4096, 4096, 4096}, costs);
  EXPECT_NEAR(f32 / (flops / (67e12 * efficiency)), 1.0, 1e-12);
  EXPECT_NEAR(bf16 / (flops / (989.4e12 * efficiency)), 1.0, 1e-12);
  EXPECT_GT(efficiency, 0.75);
  // TF32, when allowed, puts f32 on the tensor cores.
  CostTable tf32 = costs;
  tf32.allowTf32 = true;
  EXPECT_NEAR(
      (simOpSeconds(opNamed(*graph, "sq"), Device::cuda(0), tf32) - costs.kernelLaunchSeconds) /
          (flops / (494.7e12 * efficiency)),
      1.0, 1e-12);
}

TEST(SimCostModelTest, SmallAndSkinnyGemmsRunFarBelowPeak) {
  const CostTable& costs = h100SxmCosts();
  // One 128x128 tile keeps one SM of 132 busy.
  EXPECT_LT(gemmEfficiency({1, 128, 128, 128}, costs), 0.01);
  EXPECT_LT(gemmEfficiency({1, 8, 1024, 8192}, costs), 0.05);
  EXPECT_LT(gemmEfficiency({1, 1024, 1024, 1024}, costs), 0.5);
  // A batch of small GEMMs fills the SMs as one large one does.
  EXPECT_DOUBLE_EQ(gemmEfficiency({132, 128, 128, 4096}, costs),
                   gemmEfficiency({1, 128 * 132, 128, 4096}, costs));
  // The 1000x200 @ 200x8 GEMM is all launch and memory: far from 50 TFLOP/s.
  auto graph = costGraph();
  const Op& mm = opNamed(*graph, "mm");
  EXPECT_DOUBLE_EQ(gemmFlops(mm), 2.0 * 1000 * 8 * 200);
  EXPECT_LT(gemmFlops(mm) / (simOpSeconds(mm, Device::cuda(0)) - costs.kernelLaunchSeconds), 5e12);
  // transpose_a contracts over a's rows: [1000,200]^T x [1000,200] is 200 x 200 x 1000.
  EXPECT_DOUBLE_EQ(gemmFlops(opNamed(*graph, "mmt")), 2.0 * 200 * 200 * 1000);
}

// A 3-D a by one matrix runs as one GEMM over the stacked rows (isRowStackedMatmul), as the
// platforms run it; a transposed 3-D a or a 3-D b stays a batch of GEMMs.
TEST(SimCostModelTest, RowStackedMatmulIsOneGemm) {
  auto graph = parseGraph(R"(graph @stacked(%a: f32[8,128,512] @cuda:0, %w: f32[512,2048] @cuda:0,
                                            %at: f32[8,512,128] @cuda:0, %w3: f32[8,512,2048] @cuda:0) -> (s) {
  %s = matmul %a, %w : f32[8,128,2048] @cuda:0
  %t = matmul %at, %w {transpose_a = true} : f32[8,128,2048] @cuda:0
  %b = matmul %a, %w3 : f32[8,128,2048] @cuda:0
  return %s
})",
                          "stacked.gxir");
  GemmShape stacked = gemmShape(opNamed(*graph, "s"));
  EXPECT_EQ(stacked.batch, 1);
  EXPECT_EQ(stacked.m, 8 * 128);
  EXPECT_EQ(stacked.n, 2048);
  EXPECT_EQ(stacked.k, 512);
  for (const char* batched : {"t", "b"}) {
    GemmShape shape = gemmShape(opNamed(*graph, batched));
    EXPECT_EQ(shape.batch, 8) << batched;
    EXPECT_EQ(shape.m, 128) << batched;
  }
  EXPECT_DOUBLE_EQ(gemmFlops(opNamed(*graph, "s")), gemmFlops(opNamed(*graph, "b")));
}

TEST(SimCostModelTest, GemmEfficiencyAndTimeAreMonotoneInEveryDimension) {
  const CostTable& costs = h100SxmCosts();
  const std::vector<int64_t> sizes = {1, 7, 64, 127, 128, 129, 500, 2048, 16384, 100000};
  for (size_t i = 0; i + 1 < sizes.size(); ++i)
    for (int64_t a : sizes)
      for (int64_t b : sizes) {
        int64_t now = sizes[i], next = sizes[i + 1];
        double here = gemmEfficiency({1, now, a, b}, costs);
        EXPECT_GT(here, 0);
        EXPECT_LE(here, costs.gemmPeakFraction);
        EXPECT_LE(here, gemmEfficiency({1, next, a, b}, costs)) << now << " " << a << " " << b;
        EXPECT_LE(gemmEfficiency({1, a, now, b}, costs), gemmEfficiency({1, a, next, b}, costs));
        EXPECT_LE(gemmEfficiency({1, a, b, now}, costs), gemmEfficiency({1, a, b, next}, costs));
        EXPECT_LE(gemmEfficiency({now, a, b, 64}, costs), gemmEfficiency({next, a, b, 64}, costs));
      }
  // The math time is the flops at that efficiency.
  for (GemmShape shape :
       {GemmShape{1, 8, 8192, 8192}, GemmShape{1, 1000, 130, 77}, GemmShape{4, 4096, 4096, 4096}})
    EXPECT_NEAR(gemmComputeSeconds(shape, DType::F32, costs) /
                    (2.0 * shape.batch * shape.m * shape.n * shape.k /
                     (67e12 * gemmEfficiency(shape, costs))),
                1.0, 1e-12);
  // Time: a larger GEMM never costs less, whichever dimension grows.
  const std::vector<int64_t> grid = {8, 100, 128, 129, 1024, 4096};
  for (int64_t m : grid)
    for (int64_t n : grid)
      for (int64_t k : grid) {
        double here = gemmSeconds(m, n, k);
        EXPECT_LE(here, gemmSeconds(m + 1, n, k)) << m << "x" << n << "x" << k;
        EXPECT_LE(here, gemmSeconds(m, n + 1, k)) << m << "x" << n << "x" << k;
        EXPECT_LE(here, gemmSeconds(m, n, k + 1)) << m << "x" << n << "x" << k;
      }
}

TEST(SimCostModelTest, ElementwiseIsBytesAtTheMemoryRatePlusOneLaunch) {
  auto graph = costGraph();
  const Op& relu = opNamed(*graph, "r");
  const Op& add = opNamed(*graph, "s");
  EXPECT_EQ(opTrafficBytes(relu), 2 * 4 * 1048576);
  EXPECT_EQ(opTrafficBytes(add), 3 * 4 * 1048576);
  EXPECT_DOUBLE_EQ(simOpSeconds(relu, Device::cuda(0)), 8.0 * 1048576 / 3.0e12 + 5e-6);
  EXPECT_GT(simOpSeconds(add, Device::cuda(0)), simOpSeconds(relu, Device::cuda(0)));
}

TEST(SimCostModelTest, HostOpsPayADispatchAndTheHostsRates) {
  auto graph = costGraph();
  const CostTable& costs = h100SxmCosts();
  EXPECT_DOUBLE_EQ(simOpSeconds(opNamed(*graph, "host"), Device::cpu()),
                   2.0 * 1000 * 8 * 200 / costs.hostGemmFlopsPerSecond + costs.hostOpSeconds);
  // Even the smallest op on the host takes time: a run that stays there is never free.
  EXPECT_GE(simOpSeconds(opNamed(*graph, "mm"), Device::cpu()), costs.hostOpSeconds);
}

// A slice of whole rows and a reshape are views on every platform (the executors alias their
// operand's bytes: ir/kernel_steps.h), as narrow(0, ...) and view are in PyTorch: no time. A
// slice the host materializes (along another axis) costs at least its bytes at the host's
// memcpy rate, and a dispatch.
TEST(SimCostModelTest, RowViewsAreFreeAndAMaterializedHostSliceCostsItsCopy) {
  auto graph = costGraph();
  const CostTable& costs = h100SxmCosts();
  EXPECT_EQ(simOpSeconds(opNamed(*graph, "ghalf"), Device::cuda(0)), 0.0);
  EXPECT_EQ(simOpSeconds(opNamed(*graph, "half"), Device::cpu()), 0.0);
  EXPECT_EQ(simOpSeconds(opNamed(*graph, "flat"), Device::cpu()), 0.0);
  EXPECT_GE(simOpSeconds(opNamed(*graph, "cols"), Device::cpu()),
            4096.0 * 512 * 4 / costs.hostMemcpyBytesPerSecond + costs.hostOpSeconds);
}

TEST(SimCostModelTest, APageableCopyIsNeverFasterThanTheHostMemcpy) {
  // The issue's case: 16 MiB between the host and a GPU, charged 0.42 ms at the pinned DMA
  // rate before; the staging memcpy alone takes 16 MiB at the table's host memcpy rate.
  const CostTable& costs = h100SxmCosts();
  double memcpy = 16.0 * kMiB / costs.hostMemcpyBytesPerSecond;
  for (CopyDirection direction : {CopyDirection::HostToDevice, CopyDirection::DeviceToHost}) {
    double seconds = simCopySeconds(direction, 16 * kMiB, HostMemory::Pageable);
    EXPECT_GE(seconds, memcpy);
    EXPECT_GT(seconds, simCopySeconds(direction, 16 * kMiB, HostMemory::Pinned));
    EXPECT_DOUBLE_EQ(seconds, simStagedCopySeconds(direction, 16 * kMiB, kStagingChunkBytes));
  }
}

TEST(SimCostModelTest, AStagedCopyOverlapsEachMemcpyWithTheOtherChunksDma) {
  const CostTable& costs = h100SxmCosts();
  const int64_t chunk = 4 * kMiB;
  double memcpy = chunk / costs.hostMemcpyBytesPerSecond;
  double dma = costs.copyLatencySeconds + chunk / costs.hostToDevicePinnedBytesPerSecond;
  ASSERT_GT(memcpy, dma);  // the host's memcpy is the slower leg with these figures
  // Four chunks: the memcpys back to back, then the last chunk's DMA.
  EXPECT_NEAR(simStagedCopySeconds(CopyDirection::HostToDevice, 4 * chunk, chunk), 4 * memcpy + dma,
              1e-15);
  // Toward the host the DMA comes first: the first DMA, then the memcpys.
  double dmaDown = costs.copyLatencySeconds + chunk / costs.deviceToHostPinnedBytesPerSecond;
  EXPECT_NEAR(simStagedCopySeconds(CopyDirection::DeviceToHost, 4 * chunk, chunk),
              dmaDown + 4 * memcpy, 1e-15);
  // One chunk: nothing to overlap, its two legs one after the other.
  EXPECT_NEAR(simStagedCopySeconds(CopyDirection::HostToDevice, chunk, chunk), memcpy + dma, 1e-15);
  // When the DMA is the slower leg, the first memcpy, then the DMAs back to back.
  CostTable fastHost = costs;
  fastHost.hostMemcpyBytesPerSecond = 400e9;
  double fastMemcpy = chunk / fastHost.hostMemcpyBytesPerSecond;
  EXPECT_NEAR(simStagedCopySeconds(CopyDirection::HostToDevice, 4 * chunk, chunk, fastHost),
              fastMemcpy + 4 * dma, 1e-15);
  // A ragged last chunk: its tiny memcpy is done long before chunk 1's DMA, which its own DMA
  // follows on the stream. And an empty copy, which is still one DMA.
  double ragged = simStagedCopySeconds(CopyDirection::HostToDevice, 2 * chunk + 10, chunk);
  EXPECT_NEAR(
      ragged,
      2 * memcpy + dma + costs.copyLatencySeconds + 10 / costs.hostToDevicePinnedBytesPerSecond,
      1e-15);
  EXPECT_DOUBLE_EQ(simStagedCopySeconds(CopyDirection::HostToDevice, 0, chunk),
                   costs.copyLatencySeconds);
  // Device-to-device copies are not staged.
  EXPECT_DOUBLE_EQ(simStagedCopySeconds(CopyDirection::DeviceToDevice, 3 * chunk, chunk),
                   simCopySeconds(CopyDirection::DeviceToDevice, 3 * chunk, HostMemory::Pinned));
}

TEST(SimCostModelTest, CopiesCostLatencyPlusBytesOverBandwidth) {
  EXPECT_DOUBLE_EQ(simCopySeconds(CopyDirection::HostToDevice, 40 * kMiB, HostMemory::Pinned),
                   5e-6 + 40.0 * kMiB / 40e9);
  EXPECT_DOUBLE_EQ(simCopySeconds(CopyDirection::DeviceToDevice, 380 * kMiB, HostMemory::Pinned),
                   5e-6 + 380.0 * kMiB / 380e9);
  // Pinned beats pageable; NVLink beats PCIe; bigger costs more.
  EXPECT_LT(simCopySeconds(CopyDirection::HostToDevice, kMiB, HostMemory::Pinned),
            simCopySeconds(CopyDirection::HostToDevice, kMiB, HostMemory::Pageable));
  EXPECT_LT(simCopySeconds(CopyDirection::DeviceToHost, kMiB, HostMemory::Pinned),
            simCopySeconds(CopyDirection::DeviceToHost, kMiB, HostMemory::Pageable));
  EXPECT_LT(simCopySeconds(CopyDirection::DeviceToDevice, kMiB, HostMemory::Pinned),
            simCopySeconds(CopyDirection::HostToDevice, kMiB, HostMemory::Pinned));
  for (HostMemory memory : {HostMemory::Pinned, HostMemory::Pageable})
    for (int64_t bytes : {int64_t{0}, int64_t{1000}, 4 * kMiB, 4 * kMiB + 1, 64 * kMiB})
      EXPECT_LT(simCopySeconds(CopyDirection::HostToDevice, bytes, memory),
                simCopySeconds(CopyDirection::HostToDevice, bytes + kMiB, memory));
}

TEST(SimCostModelTest, ManySmallCopiesCostMoreThanOneLargeOne) {
  for (CopyDirection direction :
       {CopyDirection::HostToDevice, CopyDirection::DeviceToHost, CopyDirection::DeviceToDevice}) {
    for (HostMemory memory : {HostMemory::Pinned, HostMemory::Pageable}) {
      double many = 0;
      for (int i = 0; i < 1000; ++i) many += simCopySeconds(direction, 1024, memory);
      double one = simCopySeconds(direction, 1000 * 1024, memory);
      EXPECT_GT(many, one);
      // Pinned, the difference is exactly the 999 extra latencies.
      if (memory == HostMemory::Pinned) {
        EXPECT_NEAR(many - one, 999 * h100SxmCosts().copyLatencySeconds, 1e-9);
      }
    }
  }
}

TEST(SimCostModelTest, CopyDirectionFollowsTheDevices) {
  EXPECT_EQ(copyDirection(Device::cpu(), Device::cuda(1)), CopyDirection::HostToDevice);
  EXPECT_EQ(copyDirection(Device::cuda(1), Device::cpu()), CopyDirection::DeviceToHost);
  EXPECT_EQ(copyDirection(Device::cuda(0), Device::cuda(1)), CopyDirection::DeviceToDevice);
  EXPECT_EQ(copyDirection(Device::cpu(), Device::cpu()), CopyDirection::HostToHost);
}

// A pool does one operation per element of its windows (padding not counted). On a GPU that
// math overlaps its traffic; on the host each is a load of the one-thread generated kernel.
TEST(SimCostModelTest, APoolCostsItsBytesAndItsWindowElements) {
  auto graph = parseGraph(R"(graph @pools(%x: f32[2,3,7,7] @cuda:0, %h: f32[2,3,7,7] @cpu) -> (m) {
  %m = max_pool2d %x {kernel_size = 3, stride = 2, padding = 1} : f32[2,3,4,4] @cuda:0
  %a = adaptive_avg_pool2d %x {output_size = [3, 2]} : f32[2,3,3,2] @cuda:0
  %hm = max_pool2d %h {kernel_size = 3, stride = 2, padding = 1} : f32[2,3,4,4] @cpu
  %r = relu %x : f32[2,3,7,7] @cuda:0
  return %m
})",
                          "pools.gxir");
  const CostTable& costs = h100SxmCosts();
  // Windows of 3 from -1 by 2 over 7: [0, 2), [1, 4), [3, 6), [5, 7), 10 rows and 10 columns.
  EXPECT_DOUBLE_EQ(poolFlops(opNamed(*graph, "m")), 2 * 3 * 10 * 10);
  // 7 rows in 3: [0, 3), [2, 5), [4, 7); 7 columns in 2: [0, 4), [3, 7).
  EXPECT_DOUBLE_EQ(poolFlops(opNamed(*graph, "a")), 2 * 3 * 9 * 8);
  EXPECT_EQ(poolFlops(opNamed(*graph, "r")), 0.0);
  const double bytes = 4.0 * (2 * 3 * 7 * 7 + 2 * 3 * 4 * 4);
  EXPECT_DOUBLE_EQ(
      simOpSeconds(opNamed(*graph, "m"), Device::cuda(0)),
      std::max(600.0 / costs.gemmF32FlopsPerSecond, bytes / costs.memoryBytesPerSecond) +
          costs.kernelLaunchSeconds);
  EXPECT_DOUBLE_EQ(simOpSeconds(opNamed(*graph, "hm"), Device::cpu()),
                   (bytes + 4.0 * 600) / costs.hostMemoryBytesPerSecond + costs.hostOpSeconds);
}

}  // namespace
}  // namespace gxc
