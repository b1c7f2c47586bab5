// The H100 cost model of the sim platform: exact figures for simple cases, and the orderings
// a placement decision relies on (bigger costs more, pinned beats pageable, NVLink beats
// PCIe, many small copies cost more than one large one).
#include <gtest/gtest.h>

#include <memory>

#include "ir/parser.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

std::unique_ptr<Graph> costGraph() {
  return parseGraph(R"(graph @costs(%a: f32[1000,200] @cuda:0, %b: f32[200,8] @cuda:0,
                                    %big: f32[4000,4000] @cuda:0, %v: f32[1048576] @cuda:0,
                                    %c: f32[1000,200] @cpu, %d: f32[200,8] @cpu) -> (y) {
  %mm = matmul %a, %b : f32[1000,8] @cuda:0
  %mmt = matmul %a, %a {transpose_a = true} : f32[200,200] @cuda:0
  %sq = matmul %big, %big : f32[4000,4000] @cuda:0
  %r = relu %v : f32[1048576] @cuda:0
  %s = add %v, %v : f32[1048576] @cuda:0
  %host = matmul %c, %d : f32[1000,8] @cpu
  %y = copy %mm : f32[1000,8] @cuda:0 -> @cpu
  return %y
})",
                    "costs.gxir");
}

const Op& opNamed(const Graph& graph, const std::string& name) {
  return *graph.find(name)->producer;
}

TEST(SimCostModelTest, GemmIsFlopsAtTheGemmRatePlusOneLaunch) {
  auto graph = costGraph();
  const CostTable& h100 = h100SxmCosts();
  const Op& mm = opNamed(*graph, "mm");
  EXPECT_DOUBLE_EQ(gemmFlops(mm), 2.0 * 1000 * 8 * 200);
  EXPECT_DOUBLE_EQ(simOpSeconds(mm, Device::cuda(0)),
                   2.0 * 1000 * 8 * 200 / 50e12 + h100.kernelLaunchSeconds);
  // transpose_a contracts over a's rows: [1000,200]^T x [1000,200] is 200 x 200 x 1000.
  EXPECT_DOUBLE_EQ(gemmFlops(opNamed(*graph, "mmt")), 2.0 * 200 * 200 * 1000);
  // A 4096-ish square GEMM is compute bound: about 2.6 ms at 50 TFLOP/s.
  EXPECT_NEAR(simOpSeconds(opNamed(*graph, "sq"), Device::cuda(0)),
              2.0 * 4000 * 4000 * 4000 / 50e12, 1e-5);
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

TEST(SimCostModelTest, SmallKernelsAreLaunchBoundAndTheHostHasNoLaunch) {
  auto graph = costGraph();
  const Op& mm = opNamed(*graph, "mm");
  // 3.2 MFLOP take 64 ns of math: the 5 us launch is almost all of it.
  EXPECT_GT(h100SxmCosts().kernelLaunchSeconds,
            50 * (simOpSeconds(mm, Device::cuda(0)) - h100SxmCosts().kernelLaunchSeconds));
  // The same GEMM on the host: no launch, a slower rate.
  EXPECT_DOUBLE_EQ(simOpSeconds(opNamed(*graph, "host"), Device::cpu()),
                   2.0 * 1000 * 8 * 200 / h100SxmCosts().hostGemmFlopsPerSecond);
}

TEST(SimCostModelTest, CopiesCostLatencyPlusBytesOverBandwidth) {
  const int64_t mib = 1 << 20;
  EXPECT_DOUBLE_EQ(simCopySeconds(CopyDirection::HostToDevice, 40 * mib, HostMemory::Pinned),
                   5e-6 + 40.0 * mib / 40e9);
  EXPECT_DOUBLE_EQ(simCopySeconds(CopyDirection::DeviceToDevice, 380 * mib, HostMemory::Pinned),
                   5e-6 + 380.0 * mib / 380e9);
  // Pinned beats pageable; NVLink beats PCIe; bigger costs more.
  EXPECT_LT(simCopySeconds(CopyDirection::HostToDevice, mib, HostMemory::Pinned),
            simCopySeconds(CopyDirection::HostToDevice, mib, HostMemory::Pageable));
  EXPECT_LT(simCopySeconds(CopyDirection::DeviceToHost, mib, HostMemory::Pinned),
            simCopySeconds(CopyDirection::DeviceToHost, mib, HostMemory::Pageable));
  EXPECT_LT(simCopySeconds(CopyDirection::DeviceToDevice, mib, HostMemory::Pinned),
            simCopySeconds(CopyDirection::HostToDevice, mib, HostMemory::Pinned));
  EXPECT_LT(simCopySeconds(CopyDirection::HostToDevice, mib, HostMemory::Pinned),
            simCopySeconds(CopyDirection::HostToDevice, 2 * mib, HostMemory::Pinned));
}

TEST(SimCostModelTest, ManySmallCopiesCostMoreThanOneLargeOne) {
  for (CopyDirection direction :
       {CopyDirection::HostToDevice, CopyDirection::DeviceToHost, CopyDirection::DeviceToDevice}) {
    double many = 0;
    for (int i = 0; i < 1000; ++i) many += simCopySeconds(direction, 1024, HostMemory::Pinned);
    double one = simCopySeconds(direction, 1000 * 1024, HostMemory::Pinned);
    EXPECT_GT(many, one);
    // The difference is exactly the 999 extra latencies.
    EXPECT_NEAR(many - one, 999 * h100SxmCosts().copyLatencySeconds, 1e-9);
  }
}

TEST(SimCostModelTest, StagedCopiesPayOneLatencyPerChunk) {
  const int64_t chunk = 1 << 20;
  double oneChunk = simStagedCopySeconds(CopyDirection::HostToDevice, chunk, chunk);
  EXPECT_DOUBLE_EQ(oneChunk,
                   simCopySeconds(CopyDirection::HostToDevice, chunk, HostMemory::Pinned));
  double threeChunks = simStagedCopySeconds(CopyDirection::HostToDevice, 3 * chunk - 10, chunk);
  EXPECT_NEAR(threeChunks, 3 * 5e-6 + (3.0 * chunk - 10) / 40e9, 1e-12);
  // A device-to-device copy is not staged.
  EXPECT_DOUBLE_EQ(simStagedCopySeconds(CopyDirection::DeviceToDevice, 3 * chunk, chunk),
                   simCopySeconds(CopyDirection::DeviceToDevice, 3 * chunk, HostMemory::Pinned));
}

TEST(SimCostModelTest, CopyDirectionFollowsTheDevices) {
  EXPECT_EQ(copyDirection(Device::cpu(), Device::cuda(1)), CopyDirection::HostToDevice);
  EXPECT_EQ(copyDirection(Device::cuda(1), Device::cpu()), CopyDirection::DeviceToHost);
  EXPECT_EQ(copyDirection(Device::cuda(0), Device::cuda(1)), CopyDirection::DeviceToDevice);
  EXPECT_EQ(copyDirection(Device::cpu(), Device::cpu()), CopyDirection::HostToHost);
}

}  // namespace
}  // namespace gxc
